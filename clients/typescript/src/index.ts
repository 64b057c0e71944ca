// The typed client: openapi-fetch over the types openapi-typescript generated from
// openapi.yaml (src/schema.ts, `make client`). Paths, parameters, bodies and answers are
// all checked by the compiler against the service's OpenAPI document.
import createClient, { type Client, type ClientOptions } from "openapi-fetch";

import type { components, paths } from "./schema.js";

export type { components, paths } from "./schema.js";

/** Every named schema of openapi.yaml, e.g. `Schemas["SessionResponse"]`. */
export type Schemas = components["schemas"];

/** A client of the service; every call is typed by its path and method. */
export type GameClient = Client<paths>;

/** A client of the service at `baseUrl` (e.g. "http://localhost:8000"). */
export function gameClient(baseUrl: string, options: Omit<ClientOptions, "baseUrl"> = {}): GameClient {
  return createClient<paths>({ ...options, baseUrl });
}

/** A client that speaks for one seat of a hosted session: its token goes with every call. */
export function seatClient(
  baseUrl: string,
  token: string,
  options: Omit<ClientOptions, "baseUrl"> = {},
): GameClient {
  const client = gameClient(baseUrl, options);
  client.use({
    onRequest({ request }) {
      request.headers.set("Authorization", `Bearer ${token}`);
      return request;
    },
  });
  return client;
}
