/**
 * A string as JSON spells it. Text that a JSON string holds as it is (printable ASCII but the
 * quote and the backslash) is quoted without JSON.stringify: the test is cheaper than the general
 * serializer on the short ids, methods, paths and route names of the request log and access lines.
 */
const PLAIN_JSON = /^[ !#-[\]-~]*$/

export const jsonString = (s: string): string => PLAIN_JSON.test(s) ? `"${s}"` : JSON.stringify(s)
