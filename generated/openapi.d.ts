/**
 * DO NOT EDIT. Generated from openapi.yaml by `npm run generate` (scripts/generate.ts).
 * Edit openapi.yaml and run the command again.
 */

export interface paths {
    "/plants": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Add a plant to the store
         * @description Stores a new plant under the id the client chooses. A 200 answer means
         *     the plant is durably stored. Sending the same id with the same name and
         *     tag again is a safe retry and answers 200; the same id with different
         *     content answers 409.
         */
        post: operations["createPlant"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** @description A plant as the store reports it. */
        Plant: {
            /**
             * @description The plant's common name. Any Unicode text but NUL; no lone surrogates.
             * @example Boston fern
             */
            name: string;
            /**
             * @description An optional free-form label, such as where the plant lives. Any Unicode text but NUL; no lone surrogates.
             * @example indoor
             */
            tag?: string;
        };
        /**
         * Format: int64
         * @description The plant's id, unique in the store. Any 64-bit signed integer.
         */
        PlantId: number | bigint;
        /** @description A plant to store, with the id the client chose for it. */
        NewPlant: components["schemas"]["Plant"] & {
            id: components["schemas"]["PlantId"];
        };
        /** @description What went wrong. */
        Error: {
            /**
             * Format: int32
             * @description The HTTP status code of the answer.
             */
            error: number;
            /** @description A human-readable explanation, naming the offending field where there is one. */
            message: string;
        };
    };
    responses: {
        /** @description The request is invalid (malformed JSON, a missing or wrong-typed field), or failed unexpectedly. */
        BadRequest: {
            headers: {
                /** @description `no-store` on every API answer: never kept by a cache. */
                "Cache-Control": "no-store";
                /** @description The request's id, also logged with it: the `X-Request-Id` the client sent when it is 1 to 128 characters of `A-Z a-z 0-9 - _ .`, else a new UUID. */
                "X-Request-Id": string;
                /** @description With `RATE_LIMIT_PER_MINUTE` set: how many requests a token may make per minute on this instance (requests whose token was refused count per client address). */
                "RateLimit-Limit"?: number;
                /** @description With `RATE_LIMIT_PER_MINUTE` set: how many requests remain in the current minute. */
                "RateLimit-Remaining"?: number;
                /** @description With `RATE_LIMIT_PER_MINUTE` set: seconds until the current minute ends and the count starts again. */
                "RateLimit-Reset"?: number;
                /** @description With `CORS_ORIGINS` set, on answers to a browser on a listed origin: that origin, or `*` when any is allowed. */
                "Access-Control-Allow-Origin"?: string;
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description No bearer token was sent, or the token is neither one of the service's API tokens nor a valid access token from its identity provider (expired, not yet valid, for another issuer or audience, badly signed). */
        Unauthorized: {
            headers: {
                /** @description `no-store` on every API answer: never kept by a cache. */
                "Cache-Control": "no-store";
                /** @description The request's id, also logged with it: the `X-Request-Id` the client sent when it is 1 to 128 characters of `A-Z a-z 0-9 - _ .`, else a new UUID. */
                "X-Request-Id": string;
                /** @description With `RATE_LIMIT_PER_MINUTE` set: how many requests a token may make per minute on this instance (requests whose token was refused count per client address). */
                "RateLimit-Limit"?: number;
                /** @description With `RATE_LIMIT_PER_MINUTE` set: how many requests remain in the current minute. */
                "RateLimit-Remaining"?: number;
                /** @description With `RATE_LIMIT_PER_MINUTE` set: seconds until the current minute ends and the count starts again. */
                "RateLimit-Reset"?: number;
                /** @description With `CORS_ORIGINS` set, on answers to a browser on a listed origin: that origin, or `*` when any is allowed. */
                "Access-Control-Allow-Origin"?: string;
                /** @description The bearer challenge, as in RFC 6750: `Bearer realm="plants"`, with `error="invalid_token"` when a token was rejected. */
                "WWW-Authenticate"?: string;
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The identity provider's access token is valid, but does not grant every scope the operation requires (in its `scope` or `scp` claim). */
        Forbidden: {
            headers: {
                /** @description `no-store` on every API answer: never kept by a cache. */
                "Cache-Control": "no-store";
                /** @description The request's id, also logged with it: the `X-Request-Id` the client sent when it is 1 to 128 characters of `A-Z a-z 0-9 - _ .`, else a new UUID. */
                "X-Request-Id": string;
                /** @description With `RATE_LIMIT_PER_MINUTE` set: how many requests a token may make per minute on this instance (requests whose token was refused count per client address). */
                "RateLimit-Limit"?: number;
                /** @description With `RATE_LIMIT_PER_MINUTE` set: how many requests remain in the current minute. */
                "RateLimit-Remaining"?: number;
                /** @description With `RATE_LIMIT_PER_MINUTE` set: seconds until the current minute ends and the count starts again. */
                "RateLimit-Reset"?: number;
                /** @description With `CORS_ORIGINS` set, on answers to a browser on a listed origin: that origin, or `*` when any is allowed. */
                "Access-Control-Allow-Origin"?: string;
                /** @description The bearer challenge, as in RFC 6750: `Bearer realm="plants", error="insufficient_scope", scope="..."`, naming the scopes the operation requires. */
                "WWW-Authenticate": string;
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The request did not arrive in full within the time the service allows (30 s by default); the connection is closed. */
        RequestTimeout: {
            headers: {
                /** @description `no-store` on every API answer: never kept by a cache. */
                "Cache-Control": "no-store";
                /** @description The request's id, also logged with it: the `X-Request-Id` the client sent when it is 1 to 128 characters of `A-Z a-z 0-9 - _ .`, else a new UUID. */
                "X-Request-Id": string;
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The request line and headers are larger than the service accepts (16 KiB by default); the connection is closed. */
        HeadersTooLarge: {
            headers: {
                /** @description `no-store` on every API answer: never kept by a cache. */
                "Cache-Control": "no-store";
                /** @description The request's id, also logged with it: the `X-Request-Id` the client sent when it is 1 to 128 characters of `A-Z a-z 0-9 - _ .`, else a new UUID. */
                "X-Request-Id": string;
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description A plant with this id is already stored with a different name or tag. */
        Conflict: {
            headers: {
                /** @description `no-store` on every API answer: never kept by a cache. */
                "Cache-Control": "no-store";
                /** @description The request's id, also logged with it: the `X-Request-Id` the client sent when it is 1 to 128 characters of `A-Z a-z 0-9 - _ .`, else a new UUID. */
                "X-Request-Id": string;
                /** @description With `RATE_LIMIT_PER_MINUTE` set: how many requests a token may make per minute on this instance (requests whose token was refused count per client address). */
                "RateLimit-Limit"?: number;
                /** @description With `RATE_LIMIT_PER_MINUTE` set: how many requests remain in the current minute. */
                "RateLimit-Remaining"?: number;
                /** @description With `RATE_LIMIT_PER_MINUTE` set: seconds until the current minute ends and the count starts again. */
                "RateLimit-Reset"?: number;
                /** @description With `CORS_ORIGINS` set, on answers to a browser on a listed origin: that origin, or `*` when any is allowed. */
                "Access-Control-Allow-Origin"?: string;
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The request body is larger than the service accepts (1 MiB by default). */
        PayloadTooLarge: {
            headers: {
                /** @description `no-store` on every API answer: never kept by a cache. */
                "Cache-Control": "no-store";
                /** @description The request's id, also logged with it: the `X-Request-Id` the client sent when it is 1 to 128 characters of `A-Z a-z 0-9 - _ .`, else a new UUID. */
                "X-Request-Id": string;
                /** @description With `RATE_LIMIT_PER_MINUTE` set: how many requests a token may make per minute on this instance (requests whose token was refused count per client address). */
                "RateLimit-Limit"?: number;
                /** @description With `RATE_LIMIT_PER_MINUTE` set: how many requests remain in the current minute. */
                "RateLimit-Remaining"?: number;
                /** @description With `RATE_LIMIT_PER_MINUTE` set: seconds until the current minute ends and the count starts again. */
                "RateLimit-Reset"?: number;
                /** @description With `CORS_ORIGINS` set, on answers to a browser on a listed origin: that origin, or `*` when any is allowed. */
                "Access-Control-Allow-Origin"?: string;
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The request body is not sent as `application/json`. */
        UnsupportedMediaType: {
            headers: {
                /** @description `no-store` on every API answer: never kept by a cache. */
                "Cache-Control": "no-store";
                /** @description The request's id, also logged with it: the `X-Request-Id` the client sent when it is 1 to 128 characters of `A-Z a-z 0-9 - _ .`, else a new UUID. */
                "X-Request-Id": string;
                /** @description With `RATE_LIMIT_PER_MINUTE` set: how many requests a token may make per minute on this instance (requests whose token was refused count per client address). */
                "RateLimit-Limit"?: number;
                /** @description With `RATE_LIMIT_PER_MINUTE` set: how many requests remain in the current minute. */
                "RateLimit-Remaining"?: number;
                /** @description With `RATE_LIMIT_PER_MINUTE` set: seconds until the current minute ends and the count starts again. */
                "RateLimit-Reset"?: number;
                /** @description With `CORS_ORIGINS` set, on answers to a browser on a listed origin: that origin, or `*` when any is allowed. */
                "Access-Control-Allow-Origin"?: string;
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The service failed unexpectedly. The details are logged, never sent. */
        InternalError: {
            headers: {
                /** @description `no-store` on every API answer: never kept by a cache. */
                "Cache-Control": "no-store";
                /** @description The request's id, also logged with it: the `X-Request-Id` the client sent when it is 1 to 128 characters of `A-Z a-z 0-9 - _ .`, else a new UUID. */
                "X-Request-Id": string;
                /** @description With `RATE_LIMIT_PER_MINUTE` set: how many requests a token may make per minute on this instance (requests whose token was refused count per client address). */
                "RateLimit-Limit"?: number;
                /** @description With `RATE_LIMIT_PER_MINUTE` set: how many requests remain in the current minute. */
                "RateLimit-Remaining"?: number;
                /** @description With `RATE_LIMIT_PER_MINUTE` set: seconds until the current minute ends and the count starts again. */
                "RateLimit-Reset"?: number;
                /** @description With `CORS_ORIGINS` set, on answers to a browser on a listed origin: that origin, or `*` when any is allowed. */
                "Access-Control-Allow-Origin"?: string;
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description This token (or, for requests whose token was refused, this client address) made more requests than `RATE_LIMIT_PER_MINUTE` allows on this instance within a minute. Retry after `Retry-After` seconds; nothing was written. */
        TooManyRequests: {
            headers: {
                /** @description `no-store` on every API answer: never kept by a cache. */
                "Cache-Control": "no-store";
                /** @description The request's id, also logged with it: the `X-Request-Id` the client sent when it is 1 to 128 characters of `A-Z a-z 0-9 - _ .`, else a new UUID. */
                "X-Request-Id": string;
                /** @description With `RATE_LIMIT_PER_MINUTE` set: how many requests a token may make per minute on this instance (requests whose token was refused count per client address). */
                "RateLimit-Limit"?: number;
                /** @description With `RATE_LIMIT_PER_MINUTE` set: how many requests remain in the current minute. */
                "RateLimit-Remaining"?: number;
                /** @description With `RATE_LIMIT_PER_MINUTE` set: seconds until the current minute ends and the count starts again. */
                "RateLimit-Reset"?: number;
                /** @description With `CORS_ORIGINS` set, on answers to a browser on a listed origin: that origin, or `*` when any is allowed. */
                "Access-Control-Allow-Origin"?: string;
                /** @description Seconds to wait before retrying. */
                "Retry-After"?: number;
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Retry later; sending the same plant again is always safe. The store cannot be reached or did not answer in time, too many creates wait for it, the identity provider's keys cannot be fetched to check an access token, the instance is overloaded, or it is shutting down. Nothing was written, unless the store failed or timed out while it was committing: then the retry answers 200. */
        ServiceUnavailable: {
            headers: {
                /** @description `no-store` on every API answer: never kept by a cache. */
                "Cache-Control": "no-store";
                /** @description The request's id, also logged with it: the `X-Request-Id` the client sent when it is 1 to 128 characters of `A-Z a-z 0-9 - _ .`, else a new UUID. */
                "X-Request-Id": string;
                /** @description With `RATE_LIMIT_PER_MINUTE` set: how many requests a token may make per minute on this instance (requests whose token was refused count per client address). */
                "RateLimit-Limit"?: number;
                /** @description With `RATE_LIMIT_PER_MINUTE` set: how many requests remain in the current minute. */
                "RateLimit-Remaining"?: number;
                /** @description With `RATE_LIMIT_PER_MINUTE` set: seconds until the current minute ends and the count starts again. */
                "RateLimit-Reset"?: number;
                /** @description With `CORS_ORIGINS` set, on answers to a browser on a listed origin: that origin, or `*` when any is allowed. */
                "Access-Control-Allow-Origin"?: string;
                /** @description Seconds to wait before retrying. */
                "Retry-After"?: number;
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
    };
    parameters: never;
    requestBodies: never;
    headers: {
        /** @description `no-store` on every API answer: never kept by a cache. */
        CacheControl: "no-store";
        /** @description The request's id, also logged with it: the `X-Request-Id` the client sent when it is 1 to 128 characters of `A-Z a-z 0-9 - _ .`, else a new UUID. */
        XRequestId: string;
        /** @description With `RATE_LIMIT_PER_MINUTE` set: how many requests a token may make per minute on this instance (requests whose token was refused count per client address). */
        RateLimitLimit: number;
        /** @description With `RATE_LIMIT_PER_MINUTE` set: how many requests remain in the current minute. */
        RateLimitRemaining: number;
        /** @description With `RATE_LIMIT_PER_MINUTE` set: seconds until the current minute ends and the count starts again. */
        RateLimitReset: number;
        /** @description Seconds to wait before retrying. */
        RetryAfter: number;
        /** @description With `CORS_ORIGINS` set, on answers to a browser on a listed origin: that origin, or `*` when any is allowed. */
        AccessControlAllowOrigin: string;
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    createPlant: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description The plant to store, with the id the client chose for it. */
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewPlant"];
            };
        };
        responses: {
            /** @description The plant is stored. The answer echoes it without its id. */
            200: {
                headers: {
                    /** @description `no-store` on every API answer: never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The request's id, also logged with it: the `X-Request-Id` the client sent when it is 1 to 128 characters of `A-Z a-z 0-9 - _ .`, else a new UUID. */
                    "X-Request-Id": string;
                    /** @description With `RATE_LIMIT_PER_MINUTE` set: how many requests a token may make per minute on this instance (requests whose token was refused count per client address). */
                    "RateLimit-Limit"?: number;
                    /** @description With `RATE_LIMIT_PER_MINUTE` set: how many requests remain in the current minute. */
                    "RateLimit-Remaining"?: number;
                    /** @description With `RATE_LIMIT_PER_MINUTE` set: seconds until the current minute ends and the count starts again. */
                    "RateLimit-Reset"?: number;
                    /** @description With `CORS_ORIGINS` set, on answers to a browser on a listed origin: that origin, or `*` when any is allowed. */
                    "Access-Control-Allow-Origin"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Plant"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            408: components["responses"]["RequestTimeout"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
}
