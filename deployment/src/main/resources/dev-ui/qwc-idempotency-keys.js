import { LitElement, html, css, svg } from 'lit';
import { JsonRpc } from 'jsonrpc';
import '@vaadin/grid';
import { columnBodyRenderer } from '@vaadin/grid/lit.js';
import '@vaadin/button';
import '@vaadin/progress-bar';

/**
 * The idempotency store: keys by state, the oldest live claims, the most recent keys (with their failed attempts),
 * the purge job's last run, a purge of expired keys that runs in the background while the page follows it, and the
 * release of a dead-lettered key, so that a replay of its message runs. Above them, the outcomes of the last hour,
 * minute by minute (handled, duplicates by origin, busy, retried, dead-lettered), so that a duplicate storm shows as
 * one, and each channel's oldest duplicate against its retention.
 */

/** The chart's colours, by series, in the order the service gives them. */
const COLOURS = {
    'handled': '#2e7d32',
    'duplicate: redelivery': '#1565c0',
    'duplicate: republish': '#6a1b9a',
    'duplicate: takeover': '#ef6c00',
    'duplicate: origin unknown': '#78909c',
    'busy': '#fbc02d',
    'retried': '#f06292',
    'dead-lettered': '#c62828'
};
export class QwcIdempotencyKeys extends LitElement {

    jsonRpc = new JsonRpc(this);

    static styles = css`
        .summary { display: flex; flex-wrap: wrap; gap: 2em; padding: 1em; align-items: center; }
        .figure { font-size: 1.5em; font-weight: bold; }
        .error { color: var(--lumo-error-text-color); padding: 1em; }
        h3 { margin: 0.5em 1em; }
        vaadin-grid { margin: 0 1em 1em 1em; height: auto; }
        vaadin-progress-bar { width: 10em; }
        .chart { margin: 0 1em; }
        .legend { display: flex; flex-wrap: wrap; gap: 1em; margin: 0.5em 1em; font-size: 0.9em; }
        .swatch { display: inline-block; width: 0.8em; height: 0.8em; margin-right: 0.3em; }
        .late { color: var(--lumo-error-text-color); font-weight: bold; }
        table.duplicates { margin: 0 1em 1em 1em; border-collapse: collapse; }
        table.duplicates td, table.duplicates th { padding: 0.2em 1em 0.2em 0; text-align: left; }
    `;

    static properties = {
        _state: { state: true },
        _message: { state: true },
        _error: { state: true }
    };

    connectedCallback() {
        super.connectedCallback();
        this._load();
    }

    disconnectedCallback() {
        clearTimeout(this._poll);
        super.disconnectedCallback();
    }

    _load() {
        this.jsonRpc.getState().then(response => {
            this._state = response.result;
            this._error = null;
            clearTimeout(this._poll);
            if (this._state.purging) {
                this._poll = setTimeout(() => this._load(), 1000); // follow the purge until it is done
            } else if (this._purgeStarted) {
                this._purgeStarted = false;
                const purge = this._state.lastPurge;
                if (this._state.purgeFailure) {
                    this._message = `The purge failed: ${this._state.purgeFailure}`;
                } else {
                    this._message = purge ? `Purged ${purge.deleted} expired keys in ${purge.tookMillis} ms` : 'Purged';
                }
            }
        }).catch(error => {
            this._error = `Could not read the idempotency store: ${error?.error?.message ?? error}`;
        });
    }

    _purge() {
        this.jsonRpc.startPurge().then(response => {
            this._purgeStarted = true;
            this._message = response.result.started ? 'Purging expired keys...' : 'A purge is already running';
            this._load();
        }).catch(error => {
            this._message = `Could not start a purge: ${error?.error?.message ?? error}`;
        });
    }

    _release(row) {
        this.jsonRpc.releaseDeadLetter({ scope: row.scope, key: row.key }).then(response => {
            this._message = response.result
                ? `Released ${row.scope}:${row.key}: replay its message and it runs, with a fresh budget`
                : `${row.scope}:${row.key} is not dead-lettered`;
            this._load();
        }).catch(error => {
            this._message = `Could not release ${row.scope}:${row.key}: ${error?.error?.message ?? error}`;
        });
    }

    render() {
        if (this._error) {
            return html`<div class="error" id="error">${this._error}
                <vaadin-button @click=${this._load}>Try again</vaadin-button></div>`;
        }
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
                <vaadin-button id="purge" theme="primary" ?disabled=${this._state.purging} @click=${this._purge}>Purge expired keys now</vaadin-button>
                ${this._state.purging ? html`<vaadin-progress-bar id="purging" indeterminate></vaadin-progress-bar>` : ''}
                <vaadin-button id="refresh" @click=${this._load}>Refresh</vaadin-button>
                <span id="message">${this._message ?? ''}</span>
            </div>
            ${this._chart(this._state.history)}
            ${this._duplicates(this._state.duplicates)}
            <h3>Dead letters, most recent first</h3>
            ${this._grid(this._state.deadLetters, 'dead-letters')}
            <h3>Oldest live claims</h3>
            ${this._grid(this._state.oldestClaims, 'oldest')}
            <h3>Most recent keys</h3>
            ${this._grid(this._state.recent, 'recent')}
        `;
    }

    _chart(history) {
        if (!history) {
            return html``;
        }
        const series = Object.keys(history).filter(name => name !== 'minutes');
        const minutes = history.minutes;
        const totals = minutes.map((_, i) => series.reduce((sum, name) => sum + history[name][i], 0));
        const highest = Math.max(1, ...totals);
        const width = 10, gap = 2, height = 120;
        const bars = [];
        minutes.forEach((start, i) => {
            let y = height;
            for (const name of series) {
                const count = history[name][i];
                if (count > 0) {
                    const h = Math.max(1, Math.round(count * height / highest));
                    y -= h;
                    bars.push(svg`<rect x=${i * (width + gap)} y=${y} width=${width} height=${h} fill=${COLOURS[name] ?? '#999'}
                        data-series=${name} data-count=${count}><title>${new Date(start).toLocaleTimeString()}: ${count} ${name}</title></rect>`);
                }
            }
        });
        return html`
            <h3>Outcomes of the last hour, per minute</h3>
            <div class="chart"><svg id="outcomes" width=${minutes.length * (width + gap)} height=${height}
                role="img" aria-label="Outcomes per minute over the last hour">${bars}</svg></div>
            <div class="legend">${series.map(name => html`<span data-legend=${name}><span class="swatch"
                style="background:${COLOURS[name] ?? '#999'}"></span>${name}
                <span class="figure-small">${history[name].reduce((a, b) => a + b, 0)}</span></span>`)}</div>`;
    }

    _duplicates(rows) {
        if (!rows || rows.length === 0) {
            return html``;
        }
        return html`
            <h3>Oldest duplicate against the retention</h3>
            <table class="duplicates" id="duplicates">
                <tr><th>Channel</th><th>Oldest duplicate</th><th>Retention</th><th>Share</th></tr>
                ${rows.map(row => html`<tr data-channel=${row.channel}>
                    <td>${row.channel}</td><td>${row.oldestAgeSeconds.toFixed(1)} s</td><td>${row.retentionSeconds} s</td>
                    <td class=${row.share >= 0.9 ? 'late' : ''}>${(row.share * 100).toFixed(1)} %</td></tr>`)}
            </table>`;
    }

    _grid(rows, id) {
        return html`
            <vaadin-grid id="${id}" .items=${rows || []} all-rows-visible theme="compact row-stripes">
                <vaadin-grid-column path="scope" auto-width></vaadin-grid-column>
                <vaadin-grid-column path="key" auto-width></vaadin-grid-column>
                <vaadin-grid-column path="state" auto-width></vaadin-grid-column>
                <vaadin-grid-column path="attempts" header="Failed attempts" auto-width></vaadin-grid-column>
                <vaadin-grid-column path="lastFailure" header="Last failure" auto-width></vaadin-grid-column>
                <vaadin-grid-column path="claimedBy" header="Claimed by" auto-width></vaadin-grid-column>
                <vaadin-grid-column path="recordedAt" header="Recorded at" auto-width></vaadin-grid-column>
                <vaadin-grid-column path="expiresAt" header="Expires at" auto-width></vaadin-grid-column>
                <vaadin-grid-column header="" auto-width ${columnBodyRenderer(row => row.state === 'DEAD_LETTERED'
                        ? html`<vaadin-button theme="small" class="release" @click=${() => this._release(row)}>Release</vaadin-button>`
                        : html``, [])}></vaadin-grid-column>
            </vaadin-grid>`;
    }
}
customElements.define('qwc-idempotency-keys', QwcIdempotencyKeys);
