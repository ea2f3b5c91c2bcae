// One output-schema validator cache for the test clients of a process.
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation';

/**
 * The output-schema validators of every test client in this process, by schema text. Each SDK client
 * asks for all the tools' output schemas on its first tools/list (~0.4 s of CPU to compile them); the tests'
 * clients see the same schemas again and again, and a validator compiled once answers alike for all of
 * them. Each is compiled at its first use: a test calls a few of the tools it lists.
 */
export const sharedClientValidator: jsonSchemaValidator = (() => {
  const ajv = new AjvJsonSchemaValidator();
  const byText = new Map<string, JsonSchemaValidator<unknown>>();
  return {
    getValidator<T>(schema: Parameters<jsonSchemaValidator['getValidator']>[0]): JsonSchemaValidator<T> {
      const key = JSON.stringify(schema);
      let v = byText.get(key);
      if (!v) {
        let compiled: JsonSchemaValidator<unknown> | undefined;
        v = (input: unknown) => {
          compiled ??= ajv.getValidator(schema);
          return compiled(input);
        };
        byText.set(key, v);
      }
      return v as JsonSchemaValidator<T>;
    },
  };
})();
