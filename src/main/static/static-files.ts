/**
 * The built web UIs (the management console, the developer portal) as static
 * files: read once into memory at start (a few hundred kilobytes), then answered
 * from a map. Built by `npm run build:ui` into dist/ui/<name>; see docs/console.md.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, extname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

export interface StaticFile { body: Buffer, type: string, cache: string }

export interface StaticFiles {
  /** Whether the UI was built (false: every lookup is null). */
  readonly built: boolean
  /** The file for a path under the UI's root ('/' and unknown page paths give index.html when `spa`). */
  lookup (path: string, acceptsHtml: boolean): StaticFile | null
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2'
}

/** dist/ui/<name> of the project, whether this module runs from src/ (tests) or dist/ (npm start). */
export function builtUiDir (name: string): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir)
  return join(dir, 'dist', 'ui', name)
}

/** Loads every file under `root`; with `spa`, paths without a file extension answer index.html to browsers. */
export function loadStaticFiles (root: string, opts: { spa: boolean }): StaticFiles {
  const files = new Map<string, StaticFile>()
  if (existsSync(root)) walk(root, root, files)
  const index = files.get('/index.html') ?? null
  return {
    built: index !== null,
    lookup (path, acceptsHtml) {
      if (path === '/' || path === '') return index
      const file = files.get(path)
      if (file !== undefined) return file
      // Client-side routes (/collections/c_1) are pages of the app; a missing asset stays a 404.
      if (opts.spa && acceptsHtml && extname(path) === '') return index
      return null
    }
  }
}

function walk (root: string, dir: string, files: Map<string, StaticFile>): void {
  for (const name of readdirSync(dir)) {
    const full = join(dir, name)
    if (statSync(full).isDirectory()) { walk(root, full, files); continue }
    const path = '/' + relative(root, full).split(sep).join('/')
    // Vite names assets by content hash: they never change, pages always revalidate.
    const cache = path.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache'
    files.set(path, { body: readFileSync(full), type: TYPES[extname(name)] ?? 'application/octet-stream', cache })
  }
}
