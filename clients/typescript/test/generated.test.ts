// src/schema.ts is what openapi-typescript makes of the checked-in openapi.yaml.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { ROOT } from "./service.js";

const PACKAGE = join(ROOT, "clients", "typescript");

test("the generated client matches openapi.yaml (else run `make client`)", () => {
  const directory = mkdtempSync(join(tmpdir(), "client-schema-"));
  try {
    const fresh = join(directory, "schema.ts");
    execFileSync(
      join(PACKAGE, "node_modules", ".bin", "openapi-typescript"),
      ["../../openapi.yaml", "--default-non-nullable", "false", "--output", fresh],
      { cwd: PACKAGE, stdio: "ignore" },
    );
    const checkedIn = readFileSync(join(PACKAGE, "src", "schema.ts"), "utf8");
    assert.ok(checkedIn === readFileSync(fresh, "utf8"), "src/schema.ts is stale: run `make client`");
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
});
