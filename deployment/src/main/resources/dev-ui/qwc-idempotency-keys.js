import { LitElement, html, css } from 'lit';
import { JsonRpc } from 'jsonrpc';
import '@vaadin/grid';
import '@vaadin/button';

/**
 * The idempotency store: keys by state, the oldest live claims, the most recent keys, the purge job's last run,
 * and a button to purge expired keys now.
 */
export class QwcIdempotencyKeys extends LitElement {

    jsonRpc = new JsonRpc(this);

    static styles = css`
        .summary { display: flex; gap: 2em; padding: 1em; align-items: center; }
        .figure { font-size: 1.5em; font-weight: bold; }
        h3 { margin: 0.5em 1em; }
        vaadin-grid { margin: 0 1em 1em 1em; height: auto; }
    `;

    static properties = {
        _state: { state: true },
        _message: { state: true }
    };

    connectedCallback() {
        super.connectedCallback();
        this._load();
    }

    _load() {
        this.jsonRpc.getState().then(response => { this._state = response.result; });
    }

    _purge() {
        this.jsonRpc.purgeNow().then(response => {
            this._message = `Purged ${response.result.deleted} expired keys`;
            this._load();
        });
    }

    render() {
        if (!this._state) {
            return html`<span>Loading the idempotency store...</span>`;
        }
        const counts = this._state.counts || {};
        const purge = this._state.lastPurge;
        return html`
            <div class="summary">
                <div>Store <span class="figure" id="store">${this._state.store}</span></div>
                ${Object.keys(counts).map(state => html`<div>${state} <span class="figure" id="count-${state}">${counts[state]}</span></div>`)}
                <div>Oldest live claim <span class="figure">${this._state.oldestClaimAgeSeconds ?? '-'}</span> s</div>
                <div>Last purge <span id="last-purge">${purge ? `${purge.finishedAt}: ${purge.deleted} keys in ${purge.tookMillis} ms` : 'not run yet'}</span></div>
                <vaadin-button id="purge" theme="primary" @click=${this._purge}>Purge expired keys now</vaadin-button>
                <vaadin-button @click=${this._load}>Refresh</vaadin-button>
                <span id="message">${this._message ?? ''}</span>
            </div>
            <h3>Oldest live claims</h3>
            ${this._grid(this._state.oldestClaims, 'oldest')}
            <h3>Most recent keys</h3>
            ${this._grid(this._state.recent, 'recent')}
        `;
    }

    _grid(rows, id) {
        return html`
            <vaadin-grid id="${id}" .items=${rows || []} all-rows-visible theme="compact row-stripes">
                <vaadin-grid-column path="scope" auto-width></vaadin-grid-column>
                <vaadin-grid-column path="key" auto-width></vaadin-grid-column>
                <vaadin-grid-column path="state" auto-width></vaadin-grid-column>
                <vaadin-grid-column path="claimedBy" header="Claimed by" auto-width></vaadin-grid-column>
                <vaadin-grid-column path="recordedAt" header="Recorded at" auto-width></vaadin-grid-column>
                <vaadin-grid-column path="expiresAt" header="Expires at" auto-width></vaadin-grid-column>
            </vaadin-grid>`;
    }
}
customElements.define('qwc-idempotency-keys', QwcIdempotencyKeys);
