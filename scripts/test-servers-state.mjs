/** Where the throwaway test servers of one tap run publish their URLs: one file per tap runner process. */
import os from 'node:os'
import path from 'node:path'

export const stateFileFor = runnerPid => path.join(os.tmpdir(), `gatehouse-test-services-${runnerPid}.json`)
