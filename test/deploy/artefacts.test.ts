/**
 * The deployment artefacts, checked with the tools a user would run: `helm lint` and
 * `helm template` on deploy/helm/gatehouse (helm's official binary, installed by
 * scripts/test-services.sh), `docker compose config` (Compose v2) or `docker-compose config`
 * (Debian 12's own Compose v1), whichever this machine has, on deploy/compose.yaml, and the Dockerfile's
 * own rules (no Docker daemon or hadolint here: its base, user, health check and every file it
 * copies are checked against the build context and .dockerignore).
 */
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { TOOLS_DIR } from '../helpers/tools.js'

const run = promisify(execFile)
const root = path.resolve(import.meta.dirname, '../..')
const chart = path.join(root, 'deploy/helm/gatehouse')

function helmBinary (): string {
  const inTools = path.join(TOOLS_DIR, 'helm')
  if (fs.existsSync(inTools)) return inTools
  return 'helm' // on PATH (scripts/test-services.sh installs it when neither is there)
}
const helm = async (...args: string[]) => await run(helmBinary(), args, { cwd: root })
const EXTERNAL = ['--set', 'database.url=postgres://gatehouse:pw@db:5432/gatehouse,redis.url=redis://redis:6379,secrets.secretsKey=a2V5']

const docs = (yaml: string) => yaml.split(/^---$/m).map(d => d.trim()).filter(d => /^kind:/m.test(d))
const kindOf = (doc: string) => /^kind: (\w+)/m.exec(doc)![1]

t.test('the Helm chart lints clean and renders a deployment users expect', async t => {
  const lint = await helm('lint', '--strict', chart, ...EXTERNAL)
  t.match(lint.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/)

  const rendered = docs((await helm('template', 'gh', chart, ...EXTERNAL)).stdout)
  t.same(rendered.map(kindOf).sort(), ['ConfigMap', 'Deployment', 'PodDisruptionBudget', 'Secret', 'Service', 'Service'])
  const deployment = rendered.find(d => kindOf(d) === 'Deployment')!
  t.match(deployment, /replicas: 2/)
  t.match(deployment, /livenessProbe:\s+httpGet:\s+path: \/livez/, 'liveness on /livez')
  t.match(deployment, /readinessProbe:\s+httpGet:\s+path: \/readyz/, 'readiness on /readyz')
  t.match(deployment, /startupProbe:/)
  t.match(deployment, /resources:\s+limits:\s+memory: 1Gi\s+requests:\s+cpu: 500m\s+memory: 256Mi/)
  t.match(deployment, /runAsNonRoot: true/)
  t.match(deployment, /readOnlyRootFilesystem: true/)
  t.match(deployment, /name: DATABASE_URL\s+valueFrom:\s+secretKeyRef:/, 'the database URL comes from a Secret')
  t.match(deployment, /name: SECRETS_KEY\s+valueFrom:\s+secretKeyRef:/)
  t.match(deployment, /maxUnavailable: 0/, 'rolling updates keep every replica serving')
  const config = rendered.find(d => kindOf(d) === 'ConfigMap')!
  t.match(config, /CACHE_TYPE: redis/)
  t.match(config, /REDIS_URL: "redis:\/\/redis:6379"/)
  const pdb = rendered.find(d => kindOf(d) === 'PodDisruptionBudget')!
  t.match(pdb, /minAvailable: 1/)
  const services = rendered.filter(d => kindOf(d) === 'Service')
  t.match(services[1], /name: gh-gatehouse-management[\s\S]*type: ClusterIP/, 'the management API stays inside the cluster')

  const hpa = docs((await helm('template', 'gh', chart, ...EXTERNAL, '--set', 'autoscaling.enabled=true')).stdout)
  t.ok(hpa.some(d => kindOf(d) === 'HorizontalPodAutoscaler'), 'autoscaling renders an HPA')
  t.notMatch(hpa.find(d => kindOf(d) === 'Deployment')!, /replicas:/, 'and leaves the replica count to it')
})

t.test('the chart refuses what cannot work, and runs one replica on the embedded store with a volume', async t => {
  await t.rejects(helm('template', 'gh', chart), { code: 1, stderr: /replicaCount > 1 needs PostgreSQL: set database\.url/ })
  await t.rejects(helm('template', 'gh', chart, '--set', 'database.url=postgres://db/gh'), { code: 1, stderr: /needs Redis: set redis\.url/ })
  const single = docs((await helm('template', 'gh', chart, '--set', 'replicaCount=1,persistence.enabled=true,podDisruptionBudget.enabled=false')).stdout)
  t.same(single.map(kindOf).sort(), ['ConfigMap', 'Deployment', 'PersistentVolumeClaim', 'Service', 'Service'])
  const deployment = single.find(d => kindOf(d) === 'Deployment')!
  t.match(deployment, /type: Recreate/, 'the volume\'s one pod stops before the next starts')
  t.match(deployment, /claimName: gh-gatehouse-data/)
  t.notMatch(deployment, /DATABASE_URL/)
})

/** The Compose command a user of this machine has: `docker compose` (v2 plugin) or `docker-compose` (v1, Debian 12's package). */
async function composeCommand (): Promise<[string, ...string[]]> {
  for (const cmd of [['docker', 'compose'], ['docker-compose']] as Array<[string, ...string[]]>) {
    try {
      await run(cmd[0], [...cmd.slice(1), 'version'])
      return cmd
    } catch {}
  }
  throw new Error('Neither `docker compose` nor `docker-compose` is installed (apt-get install docker-compose)')
}

t.test('deploy/compose.yaml is a valid Compose file with the stack the docs describe', async t => {
  const cwd = path.join(root, 'deploy')
  const [cmd, ...pre] = await composeCommand()
  t.comment(`checked with ${[cmd, ...pre].join(' ')}`)
  const compose = async (...args: string[]) => await run(cmd, [...pre, '-f', 'compose.yaml', ...args], { cwd })
  await compose('config', '-q')
  const services = (await compose('config', '--services')).stdout.trim().split('\n').sort()
  t.same(services, ['gatehouse-a', 'gatehouse-b', 'nginx', 'postgres', 'redis'])
  const full = (await compose('config')).stdout
  t.match(full, /DATABASE_URL: postgres:\/\/gatehouse:gatehouse@postgres:5432\/gatehouse/)
  t.match(full, /CACHE_TYPE: redis/)
  // nginx in compose is the shipped example with the services' addresses.
  const example = fs.readFileSync(path.join(root, 'deploy/nginx/gatehouse.conf'), 'utf8')
  const composeNginx = fs.readFileSync(path.join(root, 'deploy/compose/nginx.conf'), 'utf8')
  const body = (s: string) => s.split('\n').filter(l => !l.startsWith('#')).join('\n')
    .replace(/gatehouse-a:8080|127\.0\.0\.1:8080/g, 'GW1').replace(/gatehouse-b:8080|127\.0\.0\.1:8082/g, 'GW2')
    .replace(/gatehouse-a:8081|127\.0\.0\.1:8081/g, 'MGMT').replace(/listen (127\.0\.0\.1:)?(8090);.*$/m, 'listen INTERNAL;')
  t.equal(body(composeNginx), body(example), 'deploy/compose/nginx.conf differs from the example only in addresses')
})

t.test('the Dockerfile: Node 24 on Debian 13, non-root, a health check on /readyz, and it copies only what the build context has', async t => {
  const file = fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8')
  t.match(file, /^ARG NODE_IMAGE=node:24-trixie-slim$/m, 'Node 24 on Debian 13 (glibc 2.38 for the uWebSockets.js binary)')
  const stages = file.split(/^FROM /m).slice(1)
  t.equal(stages.length, 2, 'a build stage and a runtime stage')
  const runtime = stages[1]
  t.match(runtime, /^USER node$/m, 'the runtime stage runs as the unprivileged node user')
  t.match(runtime, /^HEALTHCHECK [\s\S]*\/readyz/m)
  t.match(runtime, /^CMD \["node", "dist\/src\/main\/index\.js"\]$/m)
  t.notMatch(runtime, /npm ci|npm install/, 'nothing is installed in the runtime stage (production modules come from the build stage)')
  const ignored = fs.readFileSync(path.join(root, '.dockerignore'), 'utf8').split('\n').map(l => l.trim()).filter(l => l !== '' && !l.startsWith('#'))
  const sources = [...file.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap(m => m[1]!.split(/\s+/)) // group 1 always takes part
  t.ok(sources.length >= 5)
  for (const src of sources) {
    t.ok(fs.existsSync(path.join(root, src)), `${src} exists in the build context`)
    t.notOk(ignored.includes(src), `${src} is not excluded by .dockerignore`)
  }
  t.ok(ignored.includes('node_modules') && ignored.includes('.git') && ignored.includes('data'), 'the context leaves out node_modules, .git and local data')
})
