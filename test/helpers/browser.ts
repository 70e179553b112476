/**
 * Browser tests: the whole service in-process (embedded store, free ports) with the
 * built console and portal, driven by playwright-core in Debian's Chromium
 * (installed by scripts/test-services.sh). Screenshots go to docs/console/.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core'
import { loadConfig } from '../../src/main/config/config.js'
import { start, type Service } from '../../src/main/server.js'
import { builtUiDir } from '../../src/main/static/static-files.js'
import { createTempDir, createTestDatabase } from './db.js'
import { freePort } from './ports.js'
import { PATIENCE_MS } from './wait.js'

interface T { teardown (fn: () => unknown): void }

/**
 * Globals that `page.evaluate` callbacks read: they run in Chromium, while test/ is type-checked
 * with Node's globals only (no DOM library). A test file declares the ones it uses, e.g.
 * `declare const sessionStorage: PageStorage`.
 */
export interface PageStorage { readonly length: number, getItem (key: string): string | null }
export interface PageDocument { body: { innerText: string } }
/** An element handed to a locator's `evaluate` (playwright types it as the DOM's, absent here). */
export interface PageElement { readonly tagName: string }

const ROOT = new URL('../../', import.meta.url).pathname
export const SCREENSHOTS = `${ROOT}docs/console`

/** Builds the UIs when a test runs before `npm run build` did. */
function ensureBuilt (): void {
  if (existsSync(`${builtUiDir('console')}/index.html`) && existsSync(`${builtUiDir('portal')}/index.html`)) return
  execFileSync(process.execPath, [`${ROOT}console/build.mjs`], { stdio: 'inherit' })
}

export interface TestService {
  service: Service
  console: string
  gateway: string
  dataDir: string
  token (role: 'viewer' | 'editor' | 'admin', sub?: string): Promise<string>
  /** A management API call as another client would make it. */
  call (method: string, path: string, body?: unknown, role?: 'viewer' | 'editor' | 'admin'): Promise<{ status: number, body: any }>
}

export async function startService (t: T, env: Record<string, string> = {}): Promise<TestService> {
  ensureBuilt()
  const dataDir = await createTempDir(t)
  const [gw, mg] = [await freePort(), await freePort()]
  const config = loadConfig({
    GATEWAY_THREADS: '1',
    DATA_DIR: dataDir, DATABASE_URL: await createTestDatabase(t), PORT: String(gw), HOST: '127.0.0.1', MANAGEMENT_PORT: String(mg),
    LOG_LEVEL: 'silent', WORKERS: '1', OUTBOUND_ALLOWLIST: '127.0.0.1', CONFIG_POLL_INTERVAL_MS: '60000', ...env
  })
  const service = await start(config)
  t.teardown(async () => { await service.close() })
  const h: TestService = {
    service,
    console: `http://127.0.0.1:${mg}`,
    gateway: `http://127.0.0.1:${gw}`,
    dataDir,
    token: async (role, sub = `${role}-user`) => await service.issueToken!(sub, role),
    async call (method, path, body, role = 'admin') {
      const res = await fetch(`${h.console}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${await h.token(role, 'someone-else')}`, connection: 'close', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: body === undefined ? undefined : JSON.stringify(body)
      })
      const text = await res.text()
      return { status: res.status, body: text === '' ? undefined : JSON.parse(text) }
    }
  }
  return h
}

const violations: string[] = []

/** Content-Security-Policy violations Chromium reported in any page of this test file so far. */
export function cspViolations (): string[] { return [...violations] }

/** Headless Chromium with the flags this machine needs (no sandbox as root, no background traffic). */
export async function launchBrowser (t: T): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
  })
  // Every page is watched: a script, style or connection the policy refuses is a broken UI.
  const watch = (context: BrowserContext) => {
    context.on('page', page => {
      page.on('console', m => { if (/Content Security Policy/i.test(m.text())) violations.push(m.text()) })
    })
  }
  const newContext = browser.newContext.bind(browser)
  browser.newContext = async (...args) => { const c = await newContext(...args); watch(c); return c }
  t.teardown(async () => { await browser.close() })
  // Every page waits as long as the suite's other waits (playwright's own default, 30 s, is what a loaded machine failed on).
  const newPage = browser.newPage.bind(browser)
  browser.newPage = async (options) => {
    const page = await newPage(options)
    page.setDefaultTimeout(PATIENCE_MS)
    return page
  }
  return browser
}

/** A new tab signed in to the console with a token of `role`, through the fragment link. */
export async function signedIn (browser: Browser, svc: TestService, role: 'viewer' | 'editor' | 'admin', sub = `${role}-user`): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1600, height: 900 } })
  // A script error in the page fails loudly in the test output, not as a mysterious timeout.
  page.on('pageerror', err => { process.stderr.write(`page error: ${err.message}\n`) })
  await page.goto(`${svc.console}/#access_token=${await svc.token(role, sub)}`)
  await page.getByText(sub, { exact: false }).first().waitFor()
  return page
}

/**
 * Creates a collection through the console's form; `more` fills further fields before Create.
 * Waits for the collection's page.
 */
export async function createCollectionInConsole (page: Page, name: string, upstream: string, more?: (dialog: Locator) => Promise<void>): Promise<void> {
  await page.getByRole('button', { name: 'New collection' }).click()
  const dialog = page.getByRole('dialog')
  await dialog.getByLabel('Name').fill(name)
  await dialog.getByLabel('Base path').fill(`/${name}`)
  await dialog.getByLabel('Upstream URL').fill(upstream)
  await more?.(dialog)
  await dialog.getByRole('button', { name: 'Create' }).click()
  await page.getByRole('heading', { name: new RegExp(name) }).waitFor()
}

export async function screenshot (page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true })
  await page.screenshot({ path: `${SCREENSHOTS}/${name}.png` })
}

/** The token CLI as a user runs it (compiled), against the service's data directory. */
export function tokenCli (dataDir: string, managementPort: string, args: string[]): string {
  const r = spawnSync(process.execPath, [`${ROOT}dist/src/main/cli/token.js`, ...args], { env: { ...process.env, DATA_DIR: dataDir, MANAGEMENT_PORT: managementPort, OIDC_ISSUER: '', OIDC_JWKS_URL: '' }, encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`token CLI failed: ${r.stderr}`)
  return r.stdout.trim()
}
