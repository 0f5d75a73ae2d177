// Opens a page in Debian's Chromium (headless) and prints what the page left in
// `window.__result` as one JSON line (with the page's console lines), for
// crates/server/tests/browser.rs. Usage: node drive.mjs URL
import { chromium } from "playwright-core";

const url = process.argv[2];
const browser = await chromium.launch({
  executablePath: process.env.STATEGRAPH_CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
try {
  const page = await browser.newPage();
  const console_ = [];
  page.on("console", (m) => console_.push(`${m.type()}: ${m.text()}`));
  page.on("pageerror", (e) => console_.push(`pageerror: ${e.message}`));
  await page.goto(url);
  await page.waitForFunction(() => window.__result !== undefined, null, { timeout: 60000 });
  const result = await page.evaluate(() => window.__result);
  process.stdout.write(JSON.stringify({ result, console: console_ }) + "\n");
} finally {
  await browser.close();
}
