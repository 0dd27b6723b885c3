/**
 * DO NOT EDIT. Generated from test/openapi/type-fixtures/answers.yaml by `npm run generate` (scripts/generate.ts).
 * Edit test/openapi/type-fixtures/answers.yaml and run the command again.
 */

export interface paths {
    "/pets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: operations["listPets"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/pets/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete: operations["removePet"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        Pet: {
            name: string;
        };
        Error: {
            code: number;
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
    listPets: {
        parameters: {
            query?: {
                limit?: number;
            };
            header?: {
                "X-Trace-Id"?: string;
            };
            path?: never;
            cookie?: {
                session?: string;
            };
        };
        requestBody?: never;
        responses: {
            /** @description Pets. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Pet"][];
                };
            };
            default: components["responses"]["Error"];
        };
    };
    removePet: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Removed. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description No such pet. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        missing: number;
                    };
                };
            };
            "4XX": components["responses"]["Error"];
        };
    };
}
