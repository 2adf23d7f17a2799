import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { ServedBusiness } from '../receiver-options.js';

/** The webhook paths of the businesses a receiver serves, changeable while running. */
export interface BusinessRoutes {
  /** Mounted once (`app.use`): hands a request to its business's webhook route, or on (404). */
  readonly handler: RequestHandler;
  /** Replaces the businesses served: a removed one's path answers 404 from the next request on. */
  set(businesses: readonly ServedBusiness[]): void;
  /** The webhook path when one business is served (a 404 may name it); null with several. */
  onlyPath(): string | null;
}

/**
 * One Express handler for every business's path, looked up in a map, so that adding or removing a
 * business needs no change to Express's router (which cannot remove routes). Paths compare as
 * Express's default routing does: case-insensitively, and with or without one trailing slash.
 */
export function createBusinessRoutes(
  routeFor: (business: ServedBusiness) => RequestHandler,
  businesses: readonly ServedBusiness[],
): BusinessRoutes {
  let routes = new Map<string, RequestHandler>();
  let only: string | null = null;
  const set = (next: readonly ServedBusiness[]) => {
    routes = new Map(next.map((business) => [normalizePath(business.path), routeFor(business)]));
    only = next.length === 1 ? (next[0] as ServedBusiness).path : null;
  };
  set(businesses);
  return {
    handler(req: Request, res: Response, next: NextFunction) {
      const route = routes.get(normalizePath(req.path));
      if (route === undefined) {
        next();
        return;
      }
      route(req, res, next);
    },
    set,
    onlyPath: () => only,
  };
}

function normalizePath(path: string): string {
  const lower = path.toLowerCase();
  return lower.length > 1 && lower.endsWith('/') ? lower.slice(0, -1) : lower;
}
