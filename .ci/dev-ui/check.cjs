// The extension's Dev UI page in a real headless Chromium, against the demo application in dev mode on the local
// services: payments published to RabbitMQ show up as keys in the page's grid; once expired, "Purge expired keys now"
// removes them, and the page follows the purge to its end; a payment whose charge always fails is dead-lettered, and
// its row's Release button releases its key. Writes a screenshot of the page with the keys listed.
// Usage: node check.cjs <dev-mode base URL> <screenshot.png> <retention in seconds the application was started with>
'use strict';
const puppeteer = require('puppeteer-core');
const amqp = require('amqplib');

const [base, screenshot, retentionSeconds, periodSeconds = '0'] = process.argv.slice(2);
const chromium = process.env.CHROMIUM || '/usr/bin/chromium';
const amqpUrl = process.env.AMQP_URL || 'amqp://guest:guest@127.0.0.1:5672';
const page_ = 'qwc-idempotency-keys';

function fail(message) {
  console.error(`Dev UI check failed: ${message}`);
  process.exit(1);
}

async function publish(orders, amountCents = 1200, idPrefix = 'dev-ui') {
  const connection = await amqp.connect(amqpUrl);
  try {
    const channel = await connection.createConfirmChannel();
    for (const order of orders) {
      channel.publish('payments', 'payments', Buffer.from(JSON.stringify({ orderId: order, amountCents })),
        { messageId: `${idPrefix}-${order}`, contentType: 'application/json', persistent: true });
    }
    await channel.waitForConfirms();
  } finally {
    await connection.close();
  }
}

async function cells(page, grid) {
  return page.$$eval(`${page_} >>> #${grid} vaadin-grid-cell-content`, els => els.map(e => e.textContent.trim()));
}

// The keys a grid holds now: its items, not its cells (a grid emptied keeps its hidden cells' old text).
async function gridKeys(page, grid) {
  return page.$$eval(`${page_} >>> #${grid}`, els => els.length ? (els[0].items || []).map(i => i.key) : []);
}

async function until(what, timeoutMs, probe) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) {
      return value;
    }
    if (Date.now() > deadline) {
      fail(`timed out waiting until ${what}`);
    }
    await new Promise(r => setTimeout(r, 500));
  }
}

(async () => {
  const run = Date.now().toString(36);
  const orders = [1, 2, 3].map(i => `UI-${run}-${i}`);
  const keys = orders.map(o => `charge:${o}`);
  const published = Date.now();
  await publish(orders);
  // an amount that is not a number: every attempt fails, and after its budget the payment is dead-lettered
  const poison = `UI-${run}-poison`;
  await publish([poison], 'not a number');

  const browser = await puppeteer.launch({
    executablePath: chromium, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', e => errors.push(e.message));
    await page.setViewport({ width: 1500, height: 950 });
    await page.goto(`${base}/q/dev-ui/quarkus-idempotency/keys`, { waitUntil: 'networkidle0', timeout: 60000 });

    // The page renders the store's summary (not "Loading..." forever, not an error).
    const store = await until('the page shows the store', 30000, async () => {
      const found = await page.$$eval(`${page_} >>> #store`, els => els.map(e => e.textContent.trim()));
      const error = await page.$$eval(`${page_} >>> #error`, els => els.map(e => e.textContent.trim()));
      if (error.length) {
        fail(`the page shows an error: ${error[0]}`);
      }
      return found[0];
    });

    // The keys just handled are listed (Refresh until the consumer has charged the three payments).
    await until('the grid lists the keys just handled', 60000, async () => {
      const listed = await cells(page, 'recent');
      if (keys.every(k => listed.includes(k))) {
        return true;
      }
      await page.click(`${page_} >>> #refresh`);
      return false;
    });
    const confirmed = await page.$$eval(`${page_} >>> #count-CONFIRMED`, els => els.map(e => e.textContent.trim()));

    // The same payment published again under a new message id: a duplicate whose origin is a republish, charted in the
    // minute's bar, and its age shown against the retention.
    await publish([orders[0]], 1200, 'dev-ui-again');
    const republished = await until('the chart shows the republished duplicate', 60000, async () => {
      const bars = await page.$$eval(`${page_} >>> #outcomes rect`, rects => rects.map(r => r.dataset.series));
      const channels = await page.$$eval(`${page_} >>> #duplicates tr[data-channel]`, rows => rows.map(r => r.dataset.channel));
      if (bars.includes('duplicate: republish') && bars.includes('handled') && channels.includes('payments')) {
        return `${bars.length} bars, duplicates of ${channels.join(', ')}`;
      }
      await page.click(`${page_} >>> #refresh`);
      return null;
    });
    console.log(`Dev UI: outcomes chart with ${republished}`);
    // Dev UI's own toast about its extension catalogue (the registry is out of reach offline) is not our page.
    await page.evaluate(() => document.querySelectorAll('vaadin-notification-container, vaadin-notification-card')
      .forEach(e => { e.style.visibility = 'hidden'; }));
    await page.screenshot({ path: screenshot });
    console.log(`Dev UI: store ${store}, ${confirmed[0]} confirmed keys, the ${keys.length} new keys listed;`
      + ` screenshot ${screenshot}`);

    // The poison payment's key, dead-lettered, has a Release button; releasing it gives the key a fresh budget.
    const poisonKey = `charge:${poison}`;
    await until('the dead-lettered key is listed', 90000, async () => {
      const rows = await page.$$eval(`${page_} >>> #recent`, grids => grids[0].items
        .filter(r => r.state === 'DEAD_LETTERED').map(r => r.key));
      if (rows.includes(poisonKey)) {
        return true;
      }
      await page.click(`${page_} >>> #refresh`);
      return false;
    });
    // what its Release button does (the grid's rows are virtual: the button of one row cannot be told apart here)
    await page.$$eval(`${page_}`, (pages, key) => {
      const row = pages[0]._state.recent.find(r => r.key === key && r.state === 'DEAD_LETTERED');
      pages[0]._release(row);
    }, poisonKey);
    const buttons = await page.$$(`${page_} >>> #recent vaadin-button.release`);
    if (!buttons.length) {
      fail('no Release button is shown for a dead-lettered key');
    }
    const released = await until('the page reports the release', 30000, async () => {
      const text = await page.$$eval(`${page_} >>> #message`, els => els.map(e => e.textContent.trim()));
      return text[0] && text[0].includes(poisonKey) ? text[0] : null;
    });
    if (!released.startsWith('Released')) {
      fail(`the release failed: ${released}`);
    }
    console.log(`Dev UI: "${released}"`);

    // Once they have expired (on a partitioned table: once the partition of their expiry has ended), purge removes
    // them; the page follows the purge and lists what is left.
    const expiry = published + (Number(retentionSeconds) + Number(periodSeconds) + 5) * 1000; // handling took a moment
    await new Promise(r => setTimeout(r, Math.max(0, expiry - Date.now())));
    await page.click(`${page_} >>> #purge`);
    // On a partitioned table a key goes with its partition, once the partition's whole period has passed: the audit
    // consumer's keys (handled a moment later) may be in the next one. Purge again until the grid lists none of them.
    let kept = keys;
    const message = await until('the page reports the purge', 60000, async () => {
      const text = await page.$$eval(`${page_} >>> #message`, els => els.map(e => e.textContent.trim()));
      if (!text[0] || !text[0].startsWith('Purged')) {
        return null;
      }
      const left = await gridKeys(page, 'recent');
      kept = keys.filter(k => left.includes(k));
      if (kept.length) {
        await new Promise(r => setTimeout(r, 1000));
        await page.click(`${page_} >>> #purge`);
        return null;
      }
      return text[0];
    });
    if (kept.length) {
      fail(`expired keys still listed after the purge: ${kept.join(', ')}`);
    }
    if (!/^Purged [1-9][0-9]* expired keys/.test(message)) {
      fail(`the purge removed nothing: ${message}`);
    }
    if (errors.length) {
      fail(`JavaScript errors on the page: ${errors.join('; ')}`);
    }
    console.log(`Dev UI: "${message}", the expired keys are gone from the grid`);
  } finally {
    await browser.close();
  }
})().catch(e => fail(e.stack || e));
