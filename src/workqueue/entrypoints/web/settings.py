"""The web view's settings, read from ``WORKQUEUE_WEB_*`` environment variables.

Kept apart from the worker's settings: ``workqueue web`` reads these and the
database settings, a worker never reads these. Flags (``--host``, ``--port``) win
over the environment.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from workqueue.entrypoints.web.hosts import ANY_HOST, host_key
from workqueue.entrypoints.worker.settings import (
    ENV_PREFIX,
    SettingsError,
    checked_host,
    checked_port,
    env_name,
)

__all__ = ["SHORTEST_TOKEN", "WebSettings", "load_web_settings"]

# An admin token shorter than this is too easy to guess.
SHORTEST_TOKEN = 16
# The fields the flags override, named once.
_HOST_FIELD = "web_host"
_PORT_FIELD = "web_port"


def _checked_token(value: SecretStr | None) -> SecretStr | None:
    if value is None:
        return None
    token = value.get_secret_value()
    if len(token) < SHORTEST_TOKEN or any(character.isspace() for character in token):
        raise ValueError(f"must be at least {SHORTEST_TOKEN} characters, without spaces")
    return value


_Token = Annotated[SecretStr | None, AfterValidator(_checked_token)]

# A host name or IPv4 address: dot-separated labels (after host_key: lower-case, no final dot).
_HOST_NAME = re.compile(r"[a-z0-9_-]+(\.[a-z0-9_-]+)*")


def _names(value: object) -> object:
    """A comma-separated text as its names; anything else (a tuple given in code) as it is."""
    return tuple(value.split(",")) if isinstance(value, str) else value


def _is_ipv6(name: str) -> bool:
    try:
        ipaddress.IPv6Address(name)
    except ValueError:
        return False
    return True


def _checked_hosts(names: tuple[str, ...]) -> tuple[str, ...]:
    keys = tuple(host_key(name.strip()) for name in names)
    for key in keys:
        if key != ANY_HOST and not _HOST_NAME.fullmatch(key) and not _is_ipv6(key):
            raise ValueError(
                "must be host names or addresses separated by commas, without ports, or *"
            )
    return keys


_Hosts = Annotated[
    tuple[str, ...], NoDecode, BeforeValidator(_names), AfterValidator(_checked_hosts)
]


class WebSettings(BaseSettings):
    """Where ``workqueue web`` listens."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_ignore_empty=True,
        # The worker's WORKQUEUE_* variables are in the same environment.
        extra="ignore",
        frozen=True,
    )

    # Read by `workqueue web`: the address to listen on. The default keeps the view
    # on this machine; expose it on purpose (behind a proxy that authenticates).
    web_host: str = "127.0.0.1"
    # Read by `workqueue web`: the TCP port to listen on.
    web_port: int = 8080
    # Read by `workqueue web` (workqueue.entrypoints.web.actions): the admin token that the
    # cancel and requeue POSTs must carry. Unset: the view is read-only.
    web_token: _Token = None
    # Read by `workqueue web` (workqueue.entrypoints.web.hosts): the names a request's Host
    # header may carry besides the bound host and LOCAL_HOSTS, e.g. a proxy's public name;
    # `*` serves any host. Empty by default: only the bound host and this machine's names.
    web_allowed_hosts: _Hosts = ()

    @field_validator("web_host")
    @classmethod
    def _host_is_not_blank(cls, value: str) -> str:
        return checked_host(value)

    @field_validator("web_port")
    @classmethod
    def _port_is_a_port(cls, value: int) -> int:
        return checked_port(value)


def load_web_settings(*, host: str | None = None, port: int | None = None) -> WebSettings:
    """The environment's web settings, with ``host`` and ``port`` winning when given.

    :raises SettingsError: one line naming each bad setting, never quoting its value.
    """
    overrides: dict[str, Any] = {}
    if host is not None:
        overrides[_HOST_FIELD] = host
    if port is not None:
        overrides[_PORT_FIELD] = port
    try:
        return WebSettings(**overrides)
    except ValidationError as error:
        raise SettingsError(
            "; ".join(
                f"invalid setting {env_name(str(detail['loc'][0]))}: "
                f"{detail['msg'].removeprefix('Value error, ')}"
                for detail in error.errors()
            )
        ) from None
