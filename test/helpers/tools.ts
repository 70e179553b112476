/** Where scripts/test-services.sh keeps the test tools it fetches (helm, conformance suite, OTLP definitions, …). */
import os from 'node:os'
import path from 'node:path'

export const TOOLS_DIR = process.env.GATEHOUSE_TOOLS_DIR ?? path.join(os.homedir(), '.cache/gatehouse-tools')
