/**
 * A route's full path from its controller's and its method's Nest path metadata
 * (`@Controller('v1')` + `@Get('ticker/:symbol')` → `/v1/ticker/:symbol`).
 */
export function controllerRoutePath(
  base: string | string[] | undefined,
  path: string | string[] | undefined,
): string {
  const joined = [first(base), first(path)]
    .map((segment) => segment.replace(/^\/+|\/+$/g, ''))
    .filter((segment) => segment !== '')
    .join('/');
  return `/${joined}`;
}

function first(path: string | string[] | undefined): string {
  return (Array.isArray(path) ? path[0] : path) ?? '';
}
