// One output-schema validator cache for the test clients of a process.
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation';

/**
 * The output-schema validators of every test client in this process, by schema text. Each SDK client
 * compiles all the tools' output schemas on its first tools/list (~0.4 s of CPU); the tests' clients
 * see the same schemas again and again, and a validator compiled once answers alike for all of them.
 */
export const sharedClientValidator: jsonSchemaValidator = (() => {
  const ajv = new AjvJsonSchemaValidator();
  const byText = new Map<string, JsonSchemaValidator<unknown>>();
  return {
    getValidator<T>(schema: Parameters<jsonSchemaValidator['getValidator']>[0]): JsonSchemaValidator<T> {
      const key = JSON.stringify(schema);
      let v = byText.get(key);
      if (!v) byText.set(key, (v = ajv.getValidator(schema)));
      return v as JsonSchemaValidator<T>;
    },
  };
})();
