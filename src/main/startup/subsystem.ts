/**
 * What every start-up subsystem hands back: what it exposes, and how it closes. `start`
 * (../server.ts) composes them in order and closes them in reverse.
 */
export interface Subsystem {
  /** Releases what the subsystem opened; called once, after every subsystem started later has closed. */
  close (): Promise<void>
}

/** Closes subsystems in the reverse of the order they started; later ones may use earlier ones until they close. */
export async function closeInReverse (started: readonly Subsystem[]): Promise<void> {
  for (let i = started.length - 1; i >= 0; i--) await started[i]?.close()
}
