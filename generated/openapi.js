/**
 * DO NOT EDIT. Generated from openapi.yaml by `npm run generate` (scripts/generate.ts).
 * Edit openapi.yaml and run the command again.
 */
export {};
//# sourceMappingURL=openapi.js.map