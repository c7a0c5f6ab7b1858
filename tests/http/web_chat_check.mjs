// The web chat at / (gateway/http/web) in a real browser: Debian's headless Chromium driven by
// puppeteer-core. The page asks for the API key, lists the model, streams a reply with its TTFT /
// tok/s / cached-tokens line, the Stop button ends a long reply (and the server panel counts it
// CANCELLED), the page keeps its strict CSP (no console errors), and a screenshot is saved.
// Run by tests/http/web_chat_test.cc against a real gateway + worker with an API key:
//   node web_chat_check.mjs --url http://127.0.0.1:PORT --api-key KEY --chromium PATH
//                           --screenshot FILE.png
// Exits 0 when every check passed, 1 with the failure printed otherwise.
import assert from "node:assert/strict";
import puppeteer from "puppeteer-core";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, a, i, all) =>
    a.startsWith("--") ? [...pairs, [a.slice(2), all[i + 1]]] : pairs, []));
const TIMEOUT = 60000;

// Chromium's sandbox needs user namespaces or a setuid helper, and refuses to start as root:
// tests run as root in CI's container, so there (only there) it runs without it.
const browser = await puppeteer.launch({
  executablePath: args.chromium, headless: true, timeout: TIMEOUT,
  args: process.getuid() === 0 ? ["--no-sandbox"] : [],
});
let failed = false;
let page;
try {
  page = await browser.newPage();
  page.setDefaultTimeout(TIMEOUT);
  const problems = [];
  // Errors the page makes: a CSP violation ("Refused to ..."), a script error. Failed loads are
  // expected (the 401 before the key is given, the browser's own /favicon.ico).
  page.on("console", (m) => {
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) {
      problems.push(m.text());
    }
  });
  page.on("pageerror", (e) => problems.push(e.message));
  page.on("error", (e) => problems.push("the page crashed: " + e.message));
  // The tiny test model may draw its end-of-text token any step; the long reply that Stop must
  // cut short asks the server to ignore it (a field the page does not send).
  await page.setRequestInterception(true);
  page.on("request", (r) => {
    const body = r.postData();
    if (r.url().endsWith("/v1/chat/completions") && body && JSON.parse(body).max_tokens > 1000) {
      return r.continue({ postData: JSON.stringify({ ...JSON.parse(body), ignore_eos: true }) });
    }
    return r.continue();
  });

  const response = await page.goto(args.url + "/", { waitUntil: "load" });
  assert.equal(response.status(), 200);
  assert.match(response.headers()["content-security-policy"], /default-src 'none'/);
  assert.match(response.headers()["content-type"], /^text\/html/);
  console.log("ok: the page loads with its CSP");

  // /v1/models answers 401 without the key: the page asks for one.
  await page.waitForSelector("#key-form:not([hidden])");
  await page.type("#key", args["api-key"]);
  await page.click("#key-form button");
  await page.waitForFunction(() => document.querySelector("#model").options.length > 0);
  console.log("ok: the key form takes the key and the model list fills");

  // A short reply: its text streams in and the stats line follows.
  await page.$eval("#temperature", (e) => { e.value = "0"; });
  await page.$eval("#max-tokens", (e) => { e.value = "12"; });
  await page.type("#prompt", "Once upon a time");
  await page.keyboard.press("Enter");
  await page.waitForSelector("#log li.assistant .stats");
  const first = await page.$eval("#log li.assistant", (li) => ({
    text: li.querySelector(".content").textContent, stats: li.querySelector(".stats").textContent,
    error: li.classList.contains("error") }));
  assert.ok(!first.error, first.stats);
  assert.ok(first.text.length > 0, "no streamed text");
  assert.match(first.stats, /TTFT \d+ ms/);
  assert.match(first.stats, /\d+ prompt \(\d+ cached\)/);
  assert.match(first.stats, /12 generated/);
  console.log("ok: a reply streamed: " + JSON.stringify(first));

  // A long reply, stopped once its text is streaming.
  await page.$eval("#max-tokens", (e) => { e.value = "6000"; });
  await page.type("#prompt", "Tell me more");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => {
    const li = document.querySelectorAll("#log li.assistant")[1];
    return li && li.querySelector(".content").textContent.length > 0;
  }, { polling: 50 });
  // A DOM click: the button is enabled and in the page, wherever the long answer scrolled it.
  await page.$eval("#stop", (b) => b.click());
  console.log("ok: Stop clicked while the answer streamed");
  await page.waitForFunction(() => document.querySelectorAll("#log li.assistant")[1]
    .querySelector(".stats")?.textContent.includes("stopped"), { polling: 50 });
  assert.equal(await page.$eval("#send", (b) => b.disabled), false);
  console.log("ok: Stop ended the long reply");

  // The server panel (polled from /stats) counts the stopped request as cancelled and the worker
  // as idle again.
  await page.waitForFunction(() => {
    const stat = (name) => document.querySelector(`#server dd[data-stat="${name}"]`)?.textContent;
    return Number(stat("cancelled")) >= 1 && stat("running") === "0";
  }, { polling: 100 });
  console.log("ok: the server panel shows the cancelled request and nothing running");

  assert.deepEqual(problems, [], "console errors (a CSP violation shows here)");
  await page.screenshot({ path: args.screenshot });
  console.log("ok: screenshot " + args.screenshot);
} catch (e) {
  failed = true;
  console.log("FAILED: " + (e.stack || e));
  if (page) {
    console.log("the conversation: " +
                await page.$eval("#log", (log) => log.innerText).catch(() => "(none)"));
  }
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
