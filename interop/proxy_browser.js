// Drives Debian's chromium through playwright-core: loads a page over TLS
// HTTP/2 (or HTTP/3 with --quic-origin) and reloads it in the same browser
// context, so every load uses the same connection (and the same HPACK or
// QPACK tables) when the browser keeps it.  Prints one JSON object on
// stdout: per load, what the page counted (window.__ok / __bad) and what
// the DevTools protocol's network events said (status, protocol,
// connection id, errors).
//
//   node interop/proxy_browser.js --url https://localhost:19653/app/ \
//        --loads 3 --netlog build/x/netlog.json --node-modules build/node
//
// HTTP/3: --quic-origin 127.0.0.1:19656 --spki <base64 SHA-256 of the
// certificate's SubjectPublicKeyInfo> forces QUIC to that origin (no TCP
// fallback) and accepts only a certificate with that key.
//
// Run by interop/proxy_browser.py, which checks the numbers.

'use strict';

const path = require('path');

function arg(name, dflt) {
  const i = process.argv.indexOf('--' + name);
  return i > 0 ? process.argv[i + 1] : dflt;
}

const url = arg('url');
const loads = parseInt(arg('loads', '3'), 10);
const netlog = arg('netlog');
const nodeModules = path.resolve(arg('node-modules', 'build/node'),
                                 'node_modules');
const timeoutMs = parseInt(arg('timeout', '60000'), 10);
const quicOrigin = arg('quic-origin');
const spki = arg('spki');
const { chromium } = require(path.join(nodeModules, 'playwright-core'));

async function main() {
  const args = ['--no-sandbox', '--disable-gpu',
                '--no-first-run', '--disable-background-networking',
                '--disable-component-update', '--disable-sync',
                '--disable-dev-shm-usage'];
  if (quicOrigin) {
    args.push('--enable-quic', '--origin-to-force-quic-on=' + quicOrigin,
              '--ignore-certificate-errors-spki-list=' + spki);
  } else {
    args.push('--disable-quic');
  }
  if (netlog) {
    args.push('--log-net-log=' + netlog, '--net-log-capture-mode=Default');
  }
  // playwright gives the browser a fresh, temporary --user-data-dir
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true, args, timeout: 60000,
  });
  const out = { browser: browser.version(), loads: [] };
  try {
    // HTTP/3: the pinned key alone makes the certificate acceptable
    const context = await browser.newContext(
      { ignoreHTTPSErrors: !quicOrigin });
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    // every load fetches every subresource: no answer from the HTTP cache
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });

    let current = null;
    const requests = new Map();
    cdp.on('Network.requestWillBeSent', (e) => {
      if (!current || e.request.url.startsWith('data:')) return;
      requests.set(e.requestId, { url: e.request.url, load: current.n });
      current.pending++;
    });
    cdp.on('Network.responseReceived', (e) => {
      const r = requests.get(e.requestId);
      if (!r) return;
      r.status = e.response.status;
      r.protocol = e.response.protocol;
      r.connectionId = e.response.connectionId;
      r.headerCount = Object.keys(e.response.headers || {}).length;
    });
    cdp.on('Network.loadingFinished', (e) => {
      const r = requests.get(e.requestId);
      if (!r || r.done) return;
      r.done = true;
      current.pending--;
    });
    cdp.on('Network.loadingFailed', (e) => {
      const r = requests.get(e.requestId);
      if (!r || r.done) return;
      r.done = true;
      r.error = e.errorText + (e.canceled ? ' (canceled)' : '');
      current.pending--;
    });
    const consoleErrors = [];
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });

    for (let n = 1; n <= loads; n++) {
      current = { n, pending: 0 };
      requests.clear();
      const started = Date.now();
      let navError = null;
      try {
        if (n === 1) {
          await page.goto(url, { waitUntil: 'load', timeout: timeoutMs });
        } else {
          await page.reload({ waitUntil: 'load', timeout: timeoutMs });
        }
        await page.waitForFunction(
          () => window.__ok + window.__bad >= window.__total,
          null, { timeout: timeoutMs });
      } catch (e) {
        navError = String(e.message || e).split('\n')[0];
      }
      // the network events of the load's last requests
      const deadline = Date.now() + 10000;
      while (current.pending > 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
      }
      let counts = null;
      try {
        counts = await page.evaluate(() => ({
          ok: window.__ok, bad: window.__bad, total: window.__total,
          js: window.__js, failed: window.__failed.slice(0, 20),
        }));
      } catch (e) {
        navError = navError || String(e.message || e).split('\n')[0];
      }
      const reqs = [...requests.values()];
      out.loads.push({
        n, ms: Date.now() - started, navError, counts,
        pending: current.pending,
        requests: reqs.length,
        statuses: reqs.reduce((a, r) => {
          a[r.status || 'none'] = (a[r.status || 'none'] || 0) + 1;
          return a;
        }, {}),
        protocols: reqs.reduce((a, r) => {
          a[r.protocol || 'none'] = (a[r.protocol || 'none'] || 0) + 1;
          return a;
        }, {}),
        connectionIds: [...new Set(reqs.map((r) => r.connectionId))],
        failures: reqs.filter((r) => r.error)
                      .map((r) => ({ url: r.url, error: r.error })),
        notOk: reqs.filter((r) => !r.error && r.status !== 200)
                   .map((r) => ({ url: r.url, status: r.status || null })),
      });
    }
    out.consoleErrors = consoleErrors.slice(0, 20);
    await context.close();
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  process.stdout.write(JSON.stringify({ fatal: String(e.stack || e) }) + '\n');
  process.exit(1);
});
