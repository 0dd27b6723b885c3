import type { IncomingHttpHeaders } from 'node:http'

/**
 * Whether a request's headers say a body follows (RFC 9112 §6.3): a Transfer-Encoding, or a
 * Content-Length other than 0. Neither is a body of no length, whatever Content-Type it names
 * (RFC 9110 §8.6: no content is no body). Node's parser reads a request the same way.
 */
export const carriesBody = (headers: IncomingHttpHeaders): boolean => headers['transfer-encoding'] !== undefined || (headers['content-length'] ?? '0') !== '0'
