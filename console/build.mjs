// Builds the two web UIs with Vite into dist/ui/<name>: the management console
// (served at / of the management listener) and the developer portal (served at
// /portal/ of the gateway listener). Prints each one's size, gzipped.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { build } from 'vite'
import react from '@vitejs/plugin-react'

const here = fileURLToPath(new URL('.', import.meta.url))
const uis = [{ name: 'console', root: 'app', base: '/' }, { name: 'portal', root: 'portal', base: '/portal/' }]

function sizes (dir) {
  let raw = 0
  let gz = 0
  for (const name of readdirSync(dir, { recursive: true })) {
    const file = join(dir, name)
    if (!statSync(file).isFile()) continue
    const body = readFileSync(file)
    raw += body.length
    gz += gzipSync(body).length
  }
  return `${(raw / 1024).toFixed(0)} KiB (${(gz / 1024).toFixed(0)} KiB gzipped)`
}

for (const ui of uis) {
  const outDir = join(here, '..', 'dist', 'ui', ui.name)
  await build({
    configFile: false,
    root: join(here, ui.root),
    base: ui.base,
    logLevel: 'warn',
    plugins: [react()],
    build: { outDir, emptyOutDir: true, chunkSizeWarningLimit: 1024 }
  })
  console.error(`ui: ${ui.name} built into dist/ui/${ui.name}: ${sizes(outDir)}`)
}
