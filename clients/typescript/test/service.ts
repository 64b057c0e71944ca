// The real service for the client's tests: a throwaway redis-server and gunicorn with the
// production gunicorn.conf.py, both on free local ports, stopped when the tests end.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, openSync, rmSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

/** The repository's root (this file runs from clients/typescript/dist/test/). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..");
const GUNICORN = process.env.GUNICORN ?? join(ROOT, ".venv", "bin", "gunicorn");
const START_WITHIN_MS = 30_000;

export interface Service {
  url: string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => done(port));
    });
  });
}

function redisAnswers(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = createConnection({ port, host: "127.0.0.1" }, () => socket.write("PING\r\n"));
    socket.once("data", (data) => {
      socket.destroy();
      done(data.toString().startsWith("+PONG"));
    });
    socket.once("error", () => done(false));
  });
}

async function httpAnswers(url: string): Promise<boolean> {
  try {
    return (await fetch(url)).ok;
  } catch {
    return false; // not listening yet
  }
}

async function waitFor(what: string, child: ChildProcess, ready: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + START_WITHIN_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${what} exited with status ${child.exitCode}`);
    if (await ready()) return;
    await sleep(100);
  }
  throw new Error(`${what} did not answer within ${START_WITHIN_MS} ms`);
}

function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    child.once("exit", () => done());
    child.kill("SIGTERM");
  });
}

/** Redis, then gunicorn serving the app with REDIS_URL pointing at it. */
export async function startService(): Promise<Service> {
  const directory = mkdtempSync(join(tmpdir(), "client-test-"));
  const log = openSync(join(directory, "service.log"), "a");
  const stdio: ["ignore", number, number] = ["ignore", log, log];
  const output = { stdio };
  const redisPort = await freePort();
  const redis = spawn("redis-server", [
    "--port", String(redisPort), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
    "--dir", directory,
  ], output);
  const children: ChildProcess[] = [redis];
  const stop = async () => {
    await Promise.all(children.map(stopped));
    rmSync(directory, { recursive: true, force: true });
  };
  try {
    await waitFor("redis-server", redis, () => redisAnswers(redisPort));
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const gunicorn = spawn(GUNICORN, ["-c", "gunicorn.conf.py"], {
      ...output,
      cwd: ROOT,
      env: {
        ...process.env, HOST: "127.0.0.1", PORT: String(port), WEB_CONCURRENCY: "2",
        REDIS_URL: `redis://127.0.0.1:${redisPort}/0`, LONG_POLL_SECONDS: "2", LOG_LEVEL: "warning",
        // Whole matches played as fast as they go from one address: over the default limits.
        RATE_LIMITS: "false",
      },
    });
    children.unshift(gunicorn);
    await waitFor("gunicorn", gunicorn, () => httpAnswers(`${url}/livez`));
    return { url, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
