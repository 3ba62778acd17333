import { mkdirSync, readFileSync } from 'node:fs';
import type { Locator, Page } from 'playwright-core';

/**
 * Driving the console in a real browser: keyboard-only moves, accessibility checks (axe-core,
 * injected through the DevTools protocol, so the page's CSP stays as served) and screenshots
 * kept as CI artefacts (test-artifacts/console/, docs/console.md, "Tests").
 */
export const ARTIFACTS = new URL('../../test-artifacts/console/', import.meta.url).pathname;
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };
const AXE = readFileSync(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url), 'utf8');

/**
 * Presses Tab until `target` has the focus (at most `presses` times): proves it is reachable
 * with the keyboard alone. Then the caller presses Enter or Space.
 */
export async function tabTo(page: Page, target: Locator, presses = 80): Promise<void> {
  const handle = await target.elementHandle();
  if (!handle) throw new Error('tabTo: the target is not on the page');
  for (let i = 0; i < presses; i++) {
    if (await handle.evaluate((element: any) => element === element.ownerDocument.activeElement)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`tabTo: ${presses} presses of Tab never reached ${await handle.evaluate((element: any) => String(element.outerHTML).slice(0, 200))}`);
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core's serious and critical violations on the page as it is now. */
export async function seriousViolations(page: Page): Promise<{ id: string; help: string; targets: string[] }[]> {
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(AXE);
  // axe checks the whole document (in the browser: globalThis is the window).
  const violations = (await page.evaluate(() => {
    const browser = globalThis as unknown as { axe: { run(context: unknown, options: object): Promise<{ violations: unknown[] }> }; document: unknown };
    return browser.axe.run(browser.document, { resultTypes: ['violations'] }).then((result) => result.violations);
  })) as AxeViolation[];
  return violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical').map((violation) => ({ id: violation.id, help: violation.help, targets: violation.nodes.map((node) => node.target.join(' ')) }));
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true });
}

/**
 * What sticks out of the viewport's width (nothing but a table's own scrolling region may scroll
 * sideways): the elements whose right edge is beyond it, outside any scrolling region. Empty when
 * the page fits.
 */
export async function overflowsSideways(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const doc = (globalThis as unknown as { document: any }).document;
    const width = doc.documentElement.clientWidth;
    if (doc.documentElement.scrollWidth <= width + 1) return [];
    return [...doc.querySelectorAll('body *')]
      .filter((element: any) => !element.closest('.scroll') && element.getBoundingClientRect().right > width + 1)
      .slice(0, 5)
      .map((element: any) => `${element.tagName.toLowerCase()}.${element.className} ${String(element.textContent).slice(0, 40)}`);
  });
}
