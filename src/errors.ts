import createError from '@fastify/error'

// The service's own named errors. Each carries the HTTP status it answers with;
// the root error handler (error-handler.ts) turns any of them into the contract's Error body.

export const OWN_CODE_PREFIX = 'PLANTS_'

export const UnauthorizedError = createError<[string]>('PLANTS_UNAUTHORIZED', '%s', 401)
export const NotFoundError = createError<[string, string]>('PLANTS_NOT_FOUND', 'Route %s %s not found', 404)
export const StoreUnavailableError = createError('PLANTS_STORE_UNAVAILABLE', 'The store is unavailable, try again later', 503)
export const EmptyBodyError = createError('PLANTS_EMPTY_BODY', 'Request body is empty; send a JSON document', 400)
export const BadJsonError = createError<[string]>('PLANTS_BAD_JSON', 'Request body is not valid JSON: %s', 400)
export const UnsupportedMediaTypeError = createError<[string]>('PLANTS_UNSUPPORTED_MEDIA_TYPE', 'Unsupported Media Type: %s; send application/json', 415)
