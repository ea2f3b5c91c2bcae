// What the built SDK bundle imports in place of `@modelcontextprotocol/server/_shims` (scripts/postbuild.mjs):
// the same two names as the SDK's Node shim, but its JSON Schema validator loads ajv (~300 KB of the SDK's
// code) on its first schema, not when the SDK is imported. The host validates tool
// arguments with its own ajv; the SDK's validates only what a client answers to an elicitation form.
import { createRequire } from 'node:module';
import process from 'node:process';
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/server';

const require = createRequire(import.meta.url);

export class DefaultJsonSchemaValidator implements jsonSchemaValidator {
  private inner: jsonSchemaValidator | undefined;

  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    if (!this.inner) {
      const ajv = require('@modelcontextprotocol/server/validators/ajv') as {
        AjvJsonSchemaValidator: new () => jsonSchemaValidator;
      };
      this.inner = new ajv.AjvJsonSchemaValidator();
    }
    return this.inner.getValidator<T>(schema);
  }
}

export { process };
