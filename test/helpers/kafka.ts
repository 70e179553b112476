/**
 * A Kafka cluster for tests: librdkafka's mock cluster (test/fixtures/kafka-mock/mock-cluster.c),
 * compiled once per machine with `cc … -lrdkafka` (Debian's librdkafka-dev), on loopback ports.
 * Brokers can be taken down and brought back; messages are produced with kafkajs.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, renameSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { Kafka, logLevel, Partitioners } from 'kafkajs'

const SOURCE = new URL('../fixtures/kafka-mock/mock-cluster.c', import.meta.url).pathname

function binary (): string {
  const hash = createHash('sha256').update(readFileSync(SOURCE)).digest('hex').slice(0, 12)
  const out = path.join(os.tmpdir(), `gatehouse-kafka-mock-${hash}`)
  if (!existsSync(out)) {
    // Built aside, then renamed: test files running at once never start a half-written binary.
    execFileSync('cc', ['-O1', '-o', `${out}.${process.pid}`, SOURCE, '-lrdkafka'], { stdio: 'inherit' })
    renameSync(`${out}.${process.pid}`, out)
  }
  return out
}

export interface MockKafka {
  brokers: string[]
  produce (topic: string, messages: Array<{ key?: string, value: string, headers?: Record<string, string>, partition?: number }>): Promise<void>
  down (id: number): Promise<void>
  up (id: number): Promise<void>
  stop (): Promise<void>
}

export async function startMockKafka (topics: Record<string, number>, brokers = 1): Promise<MockKafka> {
  const child: ChildProcess = spawn(binary(), [String(brokers), ...Object.entries(topics).map(([t, n]) => `${t}:${n}`)], { stdio: ['pipe', 'pipe', 'ignore'] })
  const lines = createInterface({ input: child.stdout! })
  const waiting: Array<(line: string) => void> = []
  lines.on('line', l => { waiting.shift()?.(l) })
  const next = async () => await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the mock Kafka cluster did not answer')), 60_000)
    waiting.push(l => { clearTimeout(timer); resolve(l) })
  })
  const first = await next()
  const m = /^bootstrap (\S+)/.exec(first)
  if (m === null) throw new Error(`mock Kafka cluster: ${first}`)
  const list = m[1]!.split(',')
  const kafka = new Kafka({ clientId: 'test-producer', brokers: list, logLevel: logLevel.NOTHING, retry: { retries: 5 } })
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false })
  let connected = false
  const command = async (line: string) => { child.stdin!.write(`${line}\n`); await next() }
  return {
    brokers: list,
    async produce (topic, messages) {
      if (!connected) { await producer.connect(); connected = true }
      await producer.send({ topic, messages: messages.map(x => ({ key: x.key, value: x.value, headers: x.headers, partition: x.partition })) })
    },
    down: async id => { await command(`down ${id}`) },
    up: async id => { await command(`up ${id}`) },
    async stop () {
      if (connected) await producer.disconnect().catch(() => {})
      child.stdin!.end()
      await new Promise(resolve => { if (child.exitCode !== null) resolve(null); else { child.once('exit', resolve); setTimeout(() => { child.kill('SIGKILL') }, 3000) } })
    }
  }
}
