import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

type Json = Record<string, unknown>;

export const COMMITTED_OPENAPI_PATH = new URL('../../openapi.json', import.meta.url);
const DOCUMENT_ID = 'openapi.json';

/** Response-body validation against the committed openapi.json, schemas resolved as JSON Schema 2020-12. */
export class OpenApiContract {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();
  readonly document: Json;

  constructor(document: Json = JSON.parse(readFileSync(COMMITTED_OPENAPI_PATH, 'utf8')) as Json) {
    this.document = document;
    const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;
    addFormats(this.ajv);
    this.ajv.addSchema({ ...document, $id: DOCUMENT_ID });
  }

  /** Throws with Ajv's errors when `body` does not match the operation's documented response. */
  assertResponse(operationId: string, status: number, contentType: string, body: unknown): void {
    const validate = this.validator(operationId, status, contentType);
    if (!validate(body)) {
      throw new Error(
        `${operationId} ${status} body does not match openapi.json: ${this.ajv.errorsText(validate.errors)}`,
      );
    }
  }

  private validator(operationId: string, status: number, contentType: string): ValidateFunction {
    const key = `${operationId} ${status} ${contentType}`;
    let validate = this.validators.get(key);
    if (validate === undefined) {
      const pointer = this.schemaPointer(operationId, status, contentType);
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}#${pointer}` });
      this.validators.set(key, validate);
    }
    return validate;
  }

  private schemaPointer(operationId: string, status: number, contentType: string): string {
    const paths = this.document.paths as Record<string, Record<string, Json>>;
    for (const [path, item] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (operation.operationId !== operationId) continue;
        const responses = operation.responses as Record<
          string,
          { content?: Record<string, unknown> }
        >;
        const response = responses[String(status)] ?? responses.default;
        if (response?.content?.[contentType] === undefined) {
          throw new Error(
            `openapi.json documents no ${contentType} ${status} response for ${operationId}`,
          );
        }
        const responseKey = responses[String(status)] === undefined ? 'default' : String(status);
        return [
          '',
          'paths',
          path,
          method,
          'responses',
          responseKey,
          'content',
          contentType,
          'schema',
        ]
          .map((segment) => segment.replace(/~/g, '~0').replace(/\//g, '~1'))
          .join('/');
      }
    }
    throw new Error(`openapi.json has no operation ${operationId}`);
  }
}
