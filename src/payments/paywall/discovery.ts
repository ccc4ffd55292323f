import type { OpenAPIObject } from '@nestjs/swagger';
import { declareDiscoveryExtension } from '@x402/extensions/bazaar';
import type { PaidRoute } from './paid-routes.js';

type Json = Record<string, unknown>;

/** What a paid route takes and returns, read from the generated OpenAPI document. */
export interface RouteDescription {
  readonly summary: string;
  readonly pathParamsSchema: Json | undefined;
  readonly pathParamsExample: Record<string, string> | undefined;
  readonly outputSchema: Json;
  readonly outputExample: Json;
}

/**
 * Describes a paid route from the OpenAPI document, so the bazaar declaration and the v1
 * `outputSchema` say exactly what Swagger says, from one source.
 */
export function describeRoute(document: OpenAPIObject, route: PaidRoute): RouteDescription {
  const openApiPath = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
  const operation = (document.paths[openApiPath] as Json | undefined)?.[
    route.method.toLowerCase()
  ] as Json | undefined;
  if (operation === undefined) throw new Error('it is missing from the OpenAPI document');
  const schemas = (document.components?.schemas ?? {}) as Record<string, Json>;
  const content = ((operation.responses as Json)['200'] as Json | undefined)?.content as
    Json | undefined;
  // a metered route answers a stream: its 200 is `text/event-stream`
  const schema = (
    (content?.['application/json'] ?? content?.['text/event-stream']) as Json | undefined
  )?.schema;
  if (schema === undefined) {
    throw new Error(
      'its OpenAPI operation has no JSON 200 response; give @Paid its `response` DTO',
    );
  }
  const outputSchema = resolveRefs(schema, schemas) as Json;
  const parameters = ((operation.parameters as Json[] | undefined) ?? []).filter(
    (parameter) => parameter.in === 'path',
  );
  return {
    summary: typeof operation.summary === 'string' ? operation.summary : '',
    pathParamsSchema:
      parameters.length === 0
        ? undefined
        : {
            type: 'object',
            properties: Object.fromEntries(
              parameters.map((parameter) => [parameter.name, parameter.schema]),
            ),
            required: parameters.map((parameter) => parameter.name),
          },
    pathParamsExample:
      parameters.length === 0
        ? undefined
        : Object.fromEntries(
            parameters.map((parameter) => [String(parameter.name), firstExample(parameter)]),
          ),
    outputSchema,
    outputExample: exampleOf(outputSchema),
  };
}

/** The bazaar extension declaration for a GET route with path parameters. */
export function bazaarDeclaration(description: RouteDescription): Record<string, unknown> {
  return declareDiscoveryExtension({
    ...(description.pathParamsSchema === undefined
      ? {}
      : {
          pathParams: description.pathParamsExample,
          pathParamsSchema: description.pathParamsSchema,
        }),
    output: { example: description.outputExample, schema: description.outputSchema },
  });
}

function resolveRefs(value: unknown, schemas: Record<string, Json>): unknown {
  if (Array.isArray(value)) return value.map((item) => resolveRefs(item, schemas));
  if (typeof value !== 'object' || value === null) return value;
  const ref = (value as Json).$ref;
  if (typeof ref === 'string') {
    const name = ref.replace('#/components/schemas/', '');
    const target = schemas[name];
    if (target === undefined) throw new Error(`unresolved schema ${ref}`);
    return resolveRefs(target, schemas);
  }
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, resolveRefs(item, schemas)]),
  );
}

function firstExample(parameter: Json): string {
  const examples = parameter.examples as Record<string, { value?: unknown }> | undefined;
  const value = Object.values(examples ?? {})[0]?.value;
  return typeof value === 'string' ? value : '';
}

function exampleOf(schema: Json): Json {
  const properties = (schema.properties ?? {}) as Record<string, Json>;
  return Object.fromEntries(
    Object.entries(properties).map(([key, property]) => [key, property.example]),
  );
}
