/**
 * DO NOT EDIT. Generated from test/openapi/type-fixtures/openapi.yaml by `npm run generate` (scripts/generate.ts).
 * Edit test/openapi/type-fixtures/openapi.yaml and run the command again.
 */

export interface paths {
    "/things": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post: operations["createThing"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/things/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: operations["getThing"];
        put?: never;
        post?: never;
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
        Thing: {
            name: string;
            tag?: string;
        };
        NewThing: components["schemas"]["Thing"] & {
            /** Format: int64 */
            id: number | bigint;
        };
        Error: {
            error: number;
            message: string;
        };
    };
    responses: {
        /** @description An error. */
        Error: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
    };
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    createThing: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewThing"];
            };
        };
        responses: {
            /** @description Stored. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Thing"];
                };
            };
            400: components["responses"]["Error"];
        };
    };
    getThing: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number | bigint;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Found. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Thing"];
                };
            };
            404: components["responses"]["Error"];
        };
    };
}
