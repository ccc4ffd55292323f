import { Injectable, RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { DECORATORS } from '@nestjs/swagger';
import { METERED_UNIT, PAID_PRICE, type UsdPrice } from '../payments/index.js';
import { controllerRoutePath } from '../common/controller-path.js';

type Json = Record<string, unknown>;

/** The routes sold as tools: every GET under this prefix. */
const TOOL_ROUTES = '/v1/';

/** One route's parameter as a tool argument. */
export interface ToolArgument {
  readonly name: string;
  readonly in: 'path' | 'query';
  readonly required: boolean;
}

/** A tool: one GET route under `/v1/`, free or at its `@Paid` price. */
export interface RouteTool {
  /** The route's operationId in snake_case (`getTicker` → `get_ticker`). */
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Json;
  /** The `@Paid` price (`$0.002`); undefined for a free route. */
  readonly price: UsdPrice | undefined;
  /** Nest path with `:param` placeholders (`/v1/ticker/:symbol`). */
  readonly path: string;
  readonly arguments: readonly ToolArgument[];
}

/** A `@ApiParam` / `@ApiQuery` as `@nestjs/swagger` keeps it on the handler. */
interface ParameterMetadata {
  readonly name?: string;
  readonly in?: string;
  readonly description?: string;
  readonly required?: boolean;
  readonly schema?: Json;
  readonly type?: unknown;
  readonly enum?: unknown[];
}

/**
 * The MCP tools, found on the routes as the paid-route price list is: every GET route under
 * `/v1/` is a tool, named by its operationId, described by its `@ApiOperation` summary, whose
 * arguments are its path parameters (`@ApiParam`) and query parameters (`@ApiQuery`) with their
 * schemas, sold at its `@Paid` price or free. A new route is a new tool; nothing here names one.
 */
@Injectable()
export class RouteTools {
  private found: readonly RouteTool[] | undefined;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  all(): readonly RouteTool[] {
    this.found ??= this.explore();
    return this.found;
  }

  named(name: string): RouteTool | undefined {
    return this.all().find((tool) => tool.name === name);
  }

  private explore(): RouteTool[] {
    const tools: RouteTool[] = [];
    for (const wrapper of this.discovery.getControllers()) {
      const controller = wrapper.metatype as (new (...args: never[]) => object) | null;
      if (controller === null || typeof controller !== 'function') continue;
      const prototype = controller.prototype as Record<string, unknown>;
      const base = this.reflector.get<string | string[] | undefined>(PATH_METADATA, controller);
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const handler = prototype[method] as (...args: unknown[]) => unknown;
        const path = this.reflector.get<string | string[] | undefined>(PATH_METADATA, handler);
        const verb = this.reflector.get<RequestMethod | undefined>(METHOD_METADATA, handler);
        if (path === undefined || verb !== RequestMethod.GET) continue;
        const route = controllerRoutePath(base, path);
        if (!route.startsWith(TOOL_ROUTES)) continue;
        // a route sold per unit delivered (a stream) is no one-answer tool
        if (this.reflector.get<string | undefined>(METERED_UNIT, handler) !== undefined) continue;
        tools.push(this.toolOf(handler, method, route));
      }
    }
    return tools;
  }

  private toolOf(
    handler: (...args: unknown[]) => unknown,
    method: string,
    path: string,
  ): RouteTool {
    const operation = this.reflector.get<{ operationId?: string; summary?: string } | undefined>(
      DECORATORS.API_OPERATION,
      handler,
    );
    const declared =
      this.reflector.get<ParameterMetadata[] | undefined>(DECORATORS.API_PARAMETERS, handler) ?? [];
    const properties: Record<string, Json> = {};
    const args: ToolArgument[] = [];
    for (const name of pathParameters(path)) {
      const parameter = declared.find((item) => item.in === 'path' && item.name === name);
      properties[name] = schemaOf(parameter);
      args.push({ name, in: 'path', required: true });
    }
    for (const parameter of declared) {
      if (parameter.in !== 'query' || parameter.name === undefined) continue;
      properties[parameter.name] = schemaOf(parameter);
      args.push({ name: parameter.name, in: 'query', required: parameter.required === true });
    }
    return {
      name: snakeCase(operation?.operationId ?? method),
      description: operation?.summary ?? path,
      inputSchema: {
        type: 'object',
        properties,
        required: args.filter((arg) => arg.required).map((arg) => arg.name),
        additionalProperties: false,
      },
      price: this.reflector.get<UsdPrice | undefined>(PAID_PRICE, handler),
      path,
      arguments: args,
    };
  }
}

/** The resource a tool's payment is for (the x402 MCP transport names tools so). */
export function toolResourceUrl(tool: RouteTool): string {
  return `mcp://tool/${tool.name}`;
}

/** `getAllTickers` → `get_all_tickers`. */
export function snakeCase(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

function pathParameters(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((match) => match[1] ?? '');
}

/** A parameter's JSON schema with its description: `schema`, or `type` / `enum` as swagger takes them. */
function schemaOf(parameter: ParameterMetadata | undefined): Json {
  const schema: Json = { ...(parameter?.schema ?? { type: jsonType(parameter?.type) }) };
  if (parameter?.enum !== undefined) schema['enum'] = parameter.enum;
  if (parameter?.description !== undefined) schema['description'] = parameter.description;
  return schema;
}

function jsonType(type: unknown): string {
  if (type === Number || type === 'number') return 'number';
  if (type === Boolean || type === 'boolean') return 'boolean';
  if (type === 'integer') return 'integer';
  return 'string';
}
