/**
 * An email as an imap_trigger outputs it: headers and the text and HTML bodies
 * decoded (MIME parts, charsets, quoted-printable, base64) by mailparser, each
 * body bounded in size. Shared by the production trigger and its test-listen.
 */
import type { AddressObject } from 'mailparser'
import { lazyRequire } from '../lazy-require.js'

const loadMailparser = lazyRequire<typeof import('mailparser')>('mailparser')

/** Bytes of the raw message fetched at most (a larger message is parsed from its beginning). */
export const MAX_SOURCE_BYTES = 4 * 1024 * 1024
/** Characters kept of each decoded body. */
export const MAX_BODY_CHARS = 1024 * 1024

export interface EmailOutput {
  subject: string
  from: string
  to: string
  date: string | null
  body_text: string
  body_html: string
  uid: number
  mailbox: string
}

const addresses = (a: AddressObject | AddressObject[] | undefined): string =>
  a === undefined ? '' : (Array.isArray(a) ? a : [a]).map(x => x.text).join(', ')
const bound = (s: string | false | undefined): string => typeof s === 'string' ? s.slice(0, MAX_BODY_CHARS) : ''

export async function decodeEmail (source: Buffer, uid: number, mailbox: string): Promise<EmailOutput> {
  // Attachments are not kept: the trigger's output is the spec's fields only.
  const m = await loadMailparser().simpleParser(source, { skipImageLinks: true, skipTextToHtml: true, skipTextLinks: true })
  return {
    subject: m.subject ?? '',
    from: addresses(m.from),
    to: addresses(m.to),
    date: m.date !== undefined && !Number.isNaN(m.date.getTime()) ? m.date.toISOString() : null,
    body_text: bound(m.text),
    body_html: bound(m.html),
    uid,
    mailbox
  }
}
