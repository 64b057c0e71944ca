"""Python clients generated from an OpenAPI document by the two most used generators,
`openapi-python-client` and OpenAPI Generator's `python` generator (the jar that PyPI's
`openapi-generator-cli` bundles, run with the machine's Java), each driven through its own
generated operations and models: `Driver.call` sends a request built from the generated
request model and returns the answer as the generated model read it, beside the JSON the
server sent.

Generating takes a while (the JVM above all), so a document's clients are generated once
per test run, shared between pytest-xdist workers through a directory keyed by the
document and the generators' versions, under a lock."""

import fcntl
import hashlib
import importlib
import importlib.metadata
import json
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

BIN = Path(sys.executable).parent
OPENAPI_PYTHON_CLIENT = BIN / "openapi-python-client"
OPENAPI_GENERATOR = BIN / "openapi-generator-cli"
METHODS = {"get", "put", "post", "delete", "patch"}
GENERATORS = ("openapi-python-client", "openapi-generator-cli")  # the PyPI packages
DRIVERS = ("openapi-python-client", "openapi-generator")  # Driver.name of each client
# openapi-python-client runs ruff over what it wrote unless told not to: not needed to import.
PYTHON_CLIENT_CONFIG = {"post_hooks": []}


def snake(name: str) -> str:
    """`createSession` -> `create_session`, `v1-games` -> `v1_games`, as both generators
    name an operation's function."""
    name = re.sub(r"[^0-9a-zA-Z]+", "_", name)
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return name.strip("_").lower()


def run(command: list[str], log: Path) -> None:
    """`command`, its output in `log`; its failure shows the output's end."""
    with log.open("w") as out:
        done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, check=False)
    if done.returncode:
        tail = log.read_text()[-4000:]
        raise AssertionError(f"{' '.join(command[:3])}... failed ({done.returncode}):\n{tail}")


def generate(spec: Path, into: Path, package: str) -> None:
    """`openapi-generator-cli validate` of `spec` (its report in `validate.log`; a failure
    raises), then both clients under `into`: packages `<package>_opc` (openapi-python-client)
    and `<package>_oag` (OpenAPI Generator), without any option that skips a check."""
    run([str(OPENAPI_GENERATOR), "validate", "-i", str(spec)], into / "validate.log")
    config = into / "openapi-python-client.json"
    settings = {**PYTHON_CLIENT_CONFIG, "package_name_override": f"{package}_opc"}
    config.write_text(json.dumps(settings))
    run(
        [str(OPENAPI_PYTHON_CLIENT), "generate", "--path", str(spec), "--meta", "none",
         "--config", str(config), "--output-path", str(into / f"{package}_opc")],
        into / "openapi-python-client.log",
    )  # fmt: skip
    run(
        [str(OPENAPI_GENERATOR), "generate", "-i", str(spec), "-g", "python",
         "-o", str(into / "oag"), "--package-name", f"{package}_oag",
         "--global-property", "apiTests=false,modelTests=false,apiDocs=false,modelDocs=false"],
        into / "openapi-generator.log",
    )  # fmt: skip


def generated(spec_text: str, shared: Path, package: str) -> Path:
    """The directory holding both clients of the document `spec_text` (generated once for
    every worker of the run): put it and its `oag` on sys.path to import them."""
    versions = [importlib.metadata.version(name) for name in GENERATORS]
    key = hashlib.sha256("\n".join([*versions, package, spec_text]).encode()).hexdigest()[:16]
    into = shared / f"clients-{package}-{key}"
    with (shared / f"clients-{package}-{key}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (into / "done").exists():
            into.mkdir(parents=True, exist_ok=True)
            spec = into / "openapi.yaml"
            spec.write_text(spec_text)
            generate(spec, into, package)
            (into / "done").touch()
    return into


def imported(into: Path, package: str) -> tuple[Any, Any]:
    """The two generated packages of `into`, imported."""
    for path in (into, into / "oag"):
        if str(path) not in sys.path:
            sys.path.insert(0, str(path))
    return importlib.import_module(f"{package}_opc"), importlib.import_module(f"{package}_oag")


def plain(value: Any) -> Any:
    """A generated model (or a list of them) as JSON data, through the model's own writer."""
    if isinstance(value, list):
        return [plain(item) for item in value]
    if hasattr(value, "to_dict"):
        return plain(value.to_dict())
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    return value


def unwrapped(value: Any) -> Any:
    """The model inside an OpenAPI Generator union wrapper (`actual_instance`), else `value`."""
    inner = getattr(value, "actual_instance", None)
    return value if inner is None else unwrapped(inner)


def no_raw_dicts(value: Any, where: str = "answer") -> None:
    """Every object of a read answer is a generated model, none a bare dict (a map's
    values excepted: there is none in what the service writes)."""
    assert not isinstance(value, dict), f"{where} was read as a bare dict: {value!r}"[:500]
    if isinstance(value, list):
        for index, item in enumerate(value):
            no_raw_dicts(item, f"{where}[{index}]")
        return
    inner = getattr(value, "actual_instance", None)  # OpenAPI Generator's union wrappers
    if inner is not None:
        no_raw_dicts(inner, where)
        return
    fields = getattr(type(value), "model_fields", None) or {
        attribute.name: None for attribute in getattr(type(value), "__attrs_attrs__", ())
    }
    for name in fields:
        if name != "additional_properties":
            no_raw_dicts(getattr(value, name), f"{where}.{name}")
    extra = getattr(value, "additional_properties", None)
    assert not extra, f"{where} kept undeclared fields: {extra!r}"


@dataclass
class Operation:
    """One operation of the document: where its generated code is found (both generators
    name an operation's function after its operationId, which every operation has)."""

    name: str  # the operationId in snake case
    tag: str
    body: str | None  # the request body's component name


def operations(document: dict) -> dict[tuple[str, str], Operation]:
    """Every operation of `document`, by (method, path)."""
    found = {}
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            if method not in METHODS:  # a path's own `parameters`
                continue
            schema = (
                operation.get("requestBody", {}).get("content", {}).get("application/json", {})
            ).get("schema", {})
            body = schema["$ref"].rsplit("/", 1)[1] if "$ref" in schema else None
            found[method, path] = Operation(
                snake(operation["operationId"]), operation["tags"][0], body
            )
    return found


def camel(name: str) -> str:
    return "".join(part.capitalize() for part in snake(name).split("_"))


@dataclass
class Answer:
    """An answer as the generated client read it, and the JSON the server sent."""

    status: int
    model: Any
    sent: Any


class Driver:
    """Calls the document's operations through one generated client."""

    name: str

    def __init__(self, package: Any, document: dict, base: str) -> None:
        self.package = package
        self.operations = operations(document)
        self.base = base
        self.clients: dict[str | None, Any] = {}  # one per token

    def call(
        self,
        method: str,
        path: str,
        *,
        body: dict | None = None,
        model: str | None = None,
        token: str | None = None,
        **parameters: Any,
    ) -> Answer:
        """The operation (method, path) with these path and query parameters, its body
        read into the generated request model (the operation's, or the game's `model` where
        the generator makes none of a union), the seat's `token` as its bearer token."""
        raise NotImplementedError

    def model(self, name: str, data: dict) -> Any:
        """`data` read into the generated model `name`."""
        raise NotImplementedError


class PythonClientDriver(Driver):
    """openapi-python-client: one module per operation (`api/<tag>/<operation>.py`), its
    `sync_detailed`; an `AuthenticatedClient` per token."""

    name = "openapi-python-client"

    def client(self, token: str | None) -> Any:
        if token not in self.clients:
            if token is None:
                self.clients[token] = self.package.Client(base_url=self.base, timeout=60)
            else:
                self.clients[token] = self.package.AuthenticatedClient(
                    base_url=self.base, token=token, timeout=60
                )
        return self.clients[token]

    def module(self, operation: Operation) -> Any:
        package = self.package.__name__
        return importlib.import_module(f"{package}.api.{snake(operation.tag)}.{operation.name}")

    def model(self, name: str, data: dict) -> Any:
        module = importlib.import_module(f"{self.package.__name__}.models.{snake(name)}")
        return getattr(module, name).from_dict(data)

    def call(self, method, path, *, body=None, model=None, token=None, **parameters):
        operation = self.operations[method, path]
        arguments = {snake(key): value for key, value in parameters.items()}
        if body is not None:
            arguments["body"] = self.model(model or operation.body, body)
        response = self.module(operation).sync_detailed(client=self.client(token), **arguments)
        sent = json.loads(response.content) if response.content else None
        return Answer(int(response.status_code), response.parsed, sent)


class GeneratorDriver(Driver):
    """OpenAPI Generator's python client: one class per tag (`<Tag>Api`), one method per
    operation, `<operation>_with_http_info` for the status and the raw body; an ApiClient
    per token."""

    name = "openapi-generator"

    def client(self, token: str | None) -> Any:
        if token not in self.clients:
            configuration = self.package.Configuration(host=self.base, access_token=token)
            self.clients[token] = self.package.ApiClient(configuration)
        return self.clients[token]

    def method(self, operation: Operation, token: str | None) -> Callable[..., Any]:
        api = getattr(self.package, f"{camel(operation.tag)}Api")(self.client(token))
        return getattr(api, f"{operation.name}_with_http_info")

    def model(self, name: str, data: dict) -> Any:
        return getattr(self.package, name).from_dict(data)

    def call(self, method, path, *, body=None, model=None, token=None, **parameters):
        operation = self.operations[method, path]
        names = re.findall(r"{(\w+)}", path)
        positional = [parameters.pop(name) for name in names]
        if body is not None:  # the operation's own model: a union tells the games apart
            positional.append(self.model(operation.body, body))
        query = {snake(key): value for key, value in parameters.items()}
        try:
            response = self.method(operation, token)(*positional, **query)
        except self.package.ApiException as error:
            sent = json.loads(error.body) if error.body else None
            return Answer(error.status, error.data, sent)
        sent = json.loads(response.raw_data) if response.raw_data else None
        return Answer(response.status_code, response.data, sent)


def drivers(into: Path, package: str, document: dict, base: str) -> dict[str, Driver]:
    """Both generated clients of `into`, calling the server at `base`, by name."""
    python_client, generator = imported(into, package)
    found = [
        PythonClientDriver(python_client, document, base),
        GeneratorDriver(generator, document, base),
    ]
    return {driver.name: driver for driver in found}


def load(text: str) -> dict:
    return yaml.load(text, Loader=yaml.CSafeLoader)
