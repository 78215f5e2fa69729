"""Types of the native half of the `acp` package (crates/acp-py/src/lib.rs)."""

from types import TracebackType
from typing import Any, Callable, Dict, Iterator, List, Literal, Optional, Tuple, Type, Union, final

__all__ = [
    "simulate",
    "parse_rates",
    "sweep_rates",
    "reproduce",
    "reproductions",
    "run_task",
    "version",
    "Source",
    "Monitor",
    "Update",
]

def simulate(path: Optional[str] = None, text: Optional[str] = None, seed: Optional[int] = None) -> str: ...
def parse_rates(rates: str) -> List[float]: ...
def sweep_rates(
    rates: List[float],
    seeds: int,
    path: Optional[str] = None,
    text: Optional[str] = None,
    seed: Optional[int] = None,
    store: Optional[str] = None,
    runner: Optional[Callable[[str, List[str]], Iterator[Tuple[int, str, Optional[bytes]]]]] = None,
) -> str: ...
def reproductions() -> List[Tuple[str, str]]: ...
def reproduce(
    name: str,
    seed: int = 1,
    seeds: Optional[int] = None,
    secs: Optional[int] = None,
    updates: Optional[int] = None,
    payload: Optional[int] = None,
    clients: Optional[List[int]] = None,
    scenarios: Optional[List[str]] = None,
    controllers: Optional[List[str]] = None,
    quick: bool = False,
    random: Optional[int] = None,
    whole_medium: bool = False,
    store: Optional[str] = None,
    runner: Optional[Callable[[str, List[str]], Iterator[Tuple[int, str, Optional[bytes]]]]] = None,
) -> Tuple[str, str, str]: ...
def run_task(study: str, origin: str) -> Tuple[str, Optional[bytes]]: ...
def version() -> str: ...

@final
class Source:
    def __new__(
        cls,
        monitor: str,
        controller: str = "seek",
        *,
        min_rate: Optional[float] = None,
        max_rate: Optional[float] = None,
        dscp: Optional[int] = None,
        keys: Optional[str] = None,
    ) -> "Source": ...
    @property
    def session(self) -> str: ...
    def push(self, payload: Union[bytes, bytearray, str]) -> None: ...
    def stats(self) -> Dict[str, Any]: ...
    def close(self) -> Dict[str, Any]: ...
    def __enter__(self) -> "Source": ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc_value: Optional[BaseException],
        traceback: Optional[TracebackType],
        /,
    ) -> Literal[False]: ...

@final
class Update:
    @property
    def session(self) -> str: ...
    @property
    def peer(self) -> str: ...
    @property
    def seq(self) -> int: ...
    @property
    def generated_ns(self) -> int: ...
    @property
    def received_ns(self) -> int: ...
    @property
    def age_ms(self) -> float: ...
    @property
    def probe(self) -> bool: ...
    @property
    def payload(self) -> bytes: ...
    def to_dict(self) -> Dict[str, Any]: ...

@final
class Monitor:
    def __new__(
        cls,
        listen: str = "0.0.0.0:7200",
        *,
        clocks_synced: bool = False,
        max_sessions: int = 10000,
        keys: Optional[str] = None,
    ) -> "Monitor": ...
    @property
    def address(self) -> str: ...
    @property
    def port(self) -> int: ...
    def poll(self, timeout: Optional[float] = 0.0) -> List[Update]: ...
    def __iter__(self) -> Iterator[Update]: ...
    def __next__(self) -> Update: ...
    def sessions(self) -> List[Dict[str, Any]]: ...
    def totals(self) -> Dict[str, Any]: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Monitor": ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc_value: Optional[BaseException],
        traceback: Optional[TracebackType],
        /,
    ) -> Literal[False]: ...
