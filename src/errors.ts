import createError from '@fastify/error'

// The service's own named errors. Each carries the HTTP status it answers with;
// the root error handler (http/error-handler.ts) turns any of them into the contract's Error body.

export const OWN_CODE_PREFIX = 'PLANTS_'

/** A client's mistake: answered, never logged as a fault, so no stack trace to capture (it is costly). */
function clientError<Args extends unknown[] = []> (code: string, message: string, status: number) {
  return createError<Args>(OWN_CODE_PREFIX + code, message, status, Error, false)
}

export const UnauthorizedError = clientError<[string]>('UNAUTHORIZED', '%s', 401)
/** A request that carries none of a security scheme's credentials: another alternative may still take it (openapi/requests/security.ts). */
export const MissingCredentialsError = clientError<[string]>('MISSING_CREDENTIALS', '%s', 401)
export const InsufficientScopeError = clientError<[string]>('INSUFFICIENT_SCOPE', 'The bearer token lacks the scope this operation requires: %s', 403)
export const NotFoundError = clientError<[string, string]>('NOT_FOUND', 'Route %s %s not found', 404)
/** The stateful mock's: an item a request names that is not there, or a create of a key that is (openapi/mock/stateful.ts). */
export const ItemNotFoundError = clientError<[string, string]>('ITEM_NOT_FOUND', 'No item of %s has the key %s', 404)
/** The stateful mock's, where the operation declares 410 (Gone) and no 404 for an item not there. */
export const ItemGoneError = clientError<[string, string]>('ITEM_GONE', 'No item of %s has the key %s', 410)
export const ItemConflictError = clientError<[string, string]>('ITEM_CONFLICT', 'An item of %s has the key %s already', 409)
/** The stateful mock's: a JSON Patch (RFC 6902) that cannot be applied to the item it names (RFC 5789 §2.2: a conflicting state), or would leave no object. */
export const PatchConflictError = clientError<[string]>('PATCH_CONFLICT', 'The patch cannot be applied to the item: %s', 409)
/** The stateful mock's: a change whose If-Match names none of the item's entity tags (RFC 9110 §13.1.1): it changed since the client read it. */
export const PreconditionFailedError = clientError<[string, string, string]>('PRECONDITION_FAILED', 'The item of %s with the key %s has changed: its entity tag is now %s', 412)
export const NotAcceptableError = clientError<[string, string]>('NOT_ACCEPTABLE', 'Not Acceptable: %s; this operation answers %s', 406)
export const MethodNotAllowedError = clientError<[string, string, string]>('METHOD_NOT_ALLOWED', 'Method %s is not allowed on %s; it allows %s', 405)
export const EmptyBodyError = clientError('EMPTY_BODY', 'Request body is empty; send a JSON document', 400)
export const BadJsonError = clientError<[string]>('BAD_JSON', 'Request body is not valid JSON: %s', 400)
export const UnsupportedMediaTypeError = clientError<[string, string]>('UNSUPPORTED_MEDIA_TYPE', 'Unsupported Media Type: %s; send %s', 415)
export const PayloadTooLargeError = clientError('PAYLOAD_TOO_LARGE', 'Request body is too large', 413)
export const TooManyPartsError = clientError<[number]>('TOO_MANY_PARTS', 'Request body has more than %d parts', 413)
export const BadMultipartError = clientError<[string]>('BAD_MULTIPART', 'Request body is not valid multipart/form-data: %s', 400)

export const RateLimitedError = clientError<[string]>('RATE_LIMITED', 'Too many requests; retry in %s', 429)

export const ValidationError = clientError<[string]>('VALIDATION', '%s', 400)
/** A number its schema takes that the engine cannot hold exactly (an integer past 2^53 not called int64, a number past a double's range): a bound of the engine's own, not the document's. */
export const InexactNumberError = clientError<[string]>('INEXACT_NUMBER', '%s', 400)
export const TooDeepError = clientError<[number]>('TOO_DEEP', 'Request body nests deeper than %d levels', 400)
export const DuplicateKeyError = clientError('DUPLICATE_KEY', 'Request body repeats a key in one object; each key may appear once', 400)
export const ForbiddenKeyError = clientError<[string]>('FORBIDDEN_KEY', 'Request body has a key that would change an object\'s prototype (__proto__, constructor.prototype): %s', 400)

export const StoreUnavailableError = createError(OWN_CODE_PREFIX + 'STORE_UNAVAILABLE', 'The store is unavailable, try again later', 503)
export const StoreTimeoutError = createError(OWN_CODE_PREFIX + 'STORE_TIMEOUT', 'The store did not answer in time; retry (a create that timed out may already be stored, and its retry is safe)', 503, Error, false)
export const StoreBusyError = createError(OWN_CODE_PREFIX + 'STORE_BUSY', 'Too many requests are waiting for the store; retry shortly', 503, Error, false)
export const OverloadedError = createError(OWN_CODE_PREFIX + 'OVERLOADED', 'The service is overloaded; retry shortly', 503, Error, false)
export const KeysUnavailableError = createError(OWN_CODE_PREFIX + 'KEYS_UNAVAILABLE', 'The identity provider\'s signing keys cannot be fetched now, so this token cannot be checked; retry shortly', 503, Error, false)
export const ShuttingDownError = createError(OWN_CODE_PREFIX + 'SHUTTING_DOWN', 'This instance is shutting down; retry', 503, Error, false)

/** A handler's answer that breaks the document, in response validation (openapi/answers/responses.ts): a fault, logged in full, answered with a generic 500. */
export const ResponseValidationError = createError<[string, number, string]>('OPENAPI_RESPONSE_INVALID', 'The answer of %s breaks the document: status %d, %s', 500)
