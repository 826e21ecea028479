import { LitElement, html, css } from 'lit';
import { JsonRpc } from 'jsonrpc';
import '@vaadin/grid';
import '@vaadin/button';

/**
 * The outbox: how many messages wait to be sent or confirmed, how long the oldest has waited, those the broker
 * refused at least once, the oldest rows with their failures, the messages sent at their commit and by the relay, and
 * a "send now" for the messages waiting for a retry.
 */
export class QwcIdempotencyOutbox extends LitElement {

    jsonRpc = new JsonRpc(this);

    static styles = css`
        .summary { display: flex; flex-wrap: wrap; gap: 2em; padding: 1em; align-items: center; }
        .figure { font-size: 1.5em; font-weight: bold; }
        .error { color: var(--lumo-error-text-color); padding: 1em; }
        vaadin-grid { margin: 0 1em 1em 1em; height: auto; }
    `;

    static properties = {
        _outbox: { state: true },
        _message: { state: true },
        _error: { state: true }
    };

    connectedCallback() {
        super.connectedCallback();
        this._load();
    }

    _load() {
        this.jsonRpc.getOutbox().then(response => {
            this._outbox = response.result;
            this._error = null;
        }).catch(e => this._error = e.error?.message ?? String(e));
    }

    _sendNow() {
        this._message = 'sending…';
        this.jsonRpc.sendOutboxNow().then(response => {
            this._message = `the relay claimed ${response.result.claimed} messages`;
            this._load();
        }).catch(e => this._error = e.error?.message ?? String(e));
    }

    render() {
        if (this._error) {
            return html`<div class="error">${this._error}</div>`;
        }
        if (!this._outbox) {
            return html`<div class="summary">Loading…</div>`;
        }
        const o = this._outbox;
        return html`
            <div class="summary">
                <div><div class="figure">${o.waiting}</div>waiting</div>
                <div><div class="figure">${o.oldestSeconds} s</div>the oldest has waited</div>
                <div><div class="figure">${o.failing}</div>refused at least once</div>
                <div><div class="figure">${o.sentAtCommit}</div>sent at commit</div>
                <div><div class="figure">${o.relayed}</div>sent by the relay</div>
                <div><div class="figure">${o.failures}</div>failed sendings</div>
                <vaadin-button @click=${() => this._sendNow()}>Send now</vaadin-button>
                <vaadin-button theme="tertiary" @click=${() => this._load()}>Refresh</vaadin-button>
                <span>${this._message ?? ''}</span>
            </div>
            <div class="summary">Channels: ${o.channels.join(', ')}</div>
            <vaadin-grid .items=${o.rows} all-rows-visible theme="compact row-stripes">
                <vaadin-grid-column path="id" auto-width></vaadin-grid-column>
                <vaadin-grid-column path="messageId" header="Message id" auto-width></vaadin-grid-column>
                <vaadin-grid-column path="channel" auto-width></vaadin-grid-column>
                <vaadin-grid-column path="key" header="Key" auto-width></vaadin-grid-column>
                <vaadin-grid-column path="createdAt" header="Written at" auto-width></vaadin-grid-column>
                <vaadin-grid-column path="attempts" header="Refused" auto-width></vaadin-grid-column>
                <vaadin-grid-column path="lastError" header="Last failure" auto-width></vaadin-grid-column>
                <vaadin-grid-column path="leaseOwner" header="Leased to" auto-width></vaadin-grid-column>
                <vaadin-grid-column path="leaseUntil" header="Until" auto-width></vaadin-grid-column>
            </vaadin-grid>`;
    }
}
customElements.define('qwc-idempotency-outbox', QwcIdempotencyOutbox);
