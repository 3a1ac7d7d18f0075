"""A client of the genlens service's HTTP API (``genlens serve``), on the
standard library alone."""

from __future__ import annotations

import json
import math
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Union

from ._cli import GenlensError, PathLike, is_dataframe, is_missing, json_value


class Client:
    """The API of a genlens service.

    >>> c = genlens.Client("http://127.0.0.1:8080", token=os.environ.get("GENLENS_TOKEN"))  # doctest: +SKIP
    >>> m = c.create_monitor("prices", "check.json", chunk_size=500)  # doctest: +SKIP
    >>> c.send_rows(m["id"], [{"id": "r1", "features": {"x": 0.3}, "prediction": 1.2}])  # doctest: +SKIP
    >>> c.chunks(m["id"])["chunks"][-1]["estimate"]  # doctest: +SKIP

    Errors the service answers (4xx, 5xx) are raised as GenlensError with
    its kind, field, index and the HTTP status.
    """

    def __init__(self, url: str, token: Optional[str] = None, timeout: float = 60.0) -> None:
        self.url = url.rstrip("/")
        self.token = token.strip() if token else None
        self.timeout = timeout

    # ------------------------------------------------------------ monitors

    def create_monitor(
        self,
        name: str,
        model: Union[PathLike, Mapping[str, Any]],
        chunk_size: Optional[int] = None,
        period: Optional[str] = None,
    ) -> Dict[str, Any]:
        """Create a monitor from the check model `genlens mse fit` wrote (its
        path or the parsed JSON document); chunks of chunk_size rows, or by
        period ("hour", "day", ...) of the rows' timestamps."""
        if not isinstance(model, Mapping):
            model = json.loads(Path(model).read_text(encoding="utf-8"))
        body: Dict[str, Any] = {"name": name, "model": model}
        if chunk_size is not None:
            body["chunk_size"] = chunk_size
        if period is not None:
            body["period"] = period
        return self._json("POST", "/api/v1/monitors", body)

    def monitors(self) -> List[Dict[str, Any]]:
        return self._json("GET", "/api/v1/monitors")["monitors"]

    def monitor(self, monitor_id: int) -> Dict[str, Any]:
        return self._json("GET", f"/api/v1/monitors/{int(monitor_id)}")

    def delete_monitor(self, monitor_id: int) -> None:
        self._request("DELETE", f"/api/v1/monitors/{int(monitor_id)}")

    def send_rows(
        self,
        monitor_id: int,
        rows: Any,
        id: str = "id",
        prediction: str = "prediction",
        timestamp: Optional[str] = None,
    ) -> Dict[str, Any]:
        """Store a batch of rows: all of them or, on an error, none.

        rows is a list of {"id", "features": {name: value}, "prediction",
        "timestamp"?}, or a pandas DataFrame with one row per row: its
        column `id`, its column `prediction`, its column `timestamp` when
        named (RFC 3339 text, or datetimes: without a time zone taken as
        UTC), and every other column
        a feature.

        Every number must be finite: a NaN or an infinity raises
        GenlensError (kind "input", the field and the row's index) before
        anything is sent, as the service would refuse it."""
        if is_dataframe(rows):
            items = _frame_rows(rows, id, prediction, timestamp)
        else:
            items = list(rows)
        for i, row in enumerate(items):
            if not isinstance(row, Mapping):
                raise GenlensError(f"rows[{i}]: a dict, not {type(row).__name__}", kind="input", field="rows", index=i)
            rid = row.get("id")
            feats = row.get("features")
            if isinstance(feats, Mapping):
                for name, v in feats.items():
                    _finite("rows", i, rid, f"features.{name}", v)
            if "prediction" in row:
                _finite("rows", i, rid, "prediction", row["prediction"])
        return self._json("POST", f"/api/v1/monitors/{int(monitor_id)}/rows", {"rows": items})

    def send_labels(self, monitor_id: int, labels: Any, id: str = "id", target: str = "target") -> Dict[str, Any]:
        """Store the targets of rows sent before: a dict {row id: target},
        a list of {"id", "target"}, a pandas Series indexed by row id, or a
        DataFrame with columns `id` and `target`. A NaN or infinite target
        raises GenlensError before anything is sent."""
        if is_dataframe(labels):
            items = [{"id": _text(r[id]), "target": r[target]} for r in labels[[id, target]].to_dict(orient="records")]
        elif type(labels).__module__.split(".")[0] == "pandas":  # a Series
            items = [{"id": _text(k), "target": v} for k, v in labels.items()]
        elif isinstance(labels, Mapping):
            items = [{"id": k, "target": v} for k, v in labels.items()]
        else:
            items = list(labels)
        for i, item in enumerate(items):
            if isinstance(item, Mapping) and "target" in item:
                _finite("labels", i, item.get("id"), "target", item["target"])
        return self._json("POST", f"/api/v1/monitors/{int(monitor_id)}/labels", {"labels": items})

    def chunks(self, monitor_id: int, limit: Optional[int] = None, before: Optional[int] = None) -> Dict[str, Any]:
        """The monitor's chunks with their estimates, alerts and realised MSE
        (a page of at most limit chunks ending before chunk `before`)."""
        return self._json("GET", f"/api/v1/monitors/{int(monitor_id)}/chunks", query={"limit": limit, "before": before})

    # ------------------------------------------------------------ jobs

    def upload(self, path: PathLike) -> Dict[str, Any]:
        """Upload a job input; the returned "id" names it in a job's fields."""
        p = Path(path)
        boundary = uuid.uuid4().hex
        head = (
            f"--{boundary}\r\n"
            f'Content-Disposition: form-data; name="file"; filename="{p.name}"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode()
        body = head + p.read_bytes() + f"\r\n--{boundary}--\r\n".encode()
        return self._json("POST", "/api/v1/files", raw=body, content_type=f"multipart/form-data; boundary={boundary}")

    def submit(self, command: str, **fields: Any) -> Dict[str, Any]:
        """Queue a job of a command ("stats", "compare", "mse fit", ...) with
        its fields (the command's flags, dashes as underscores; input files
        as upload ids)."""
        kind = command.strip().replace(" ", "-")
        return self._json("POST", f"/api/v1/jobs/{urllib.parse.quote(kind)}", fields)

    def job(self, job_id: str) -> Dict[str, Any]:
        """A job: its status, progress, request, result or error, and
        "artifacts", the files it wrote (an empty list when none)."""
        j = self._json("GET", f"/api/v1/jobs/{urllib.parse.quote(job_id)}")
        j.setdefault("artifacts", [])
        return j

    def jobs(self, limit: Optional[int] = None) -> List[Dict[str, Any]]:
        return self._json("GET", "/api/v1/jobs", query={"limit": limit})["jobs"]

    def cancel(self, job_id: str) -> Dict[str, Any]:
        return self._json("DELETE", f"/api/v1/jobs/{urllib.parse.quote(job_id)}")

    def wait(self, job_id: str, timeout: Optional[float] = None, poll: float = 0.5) -> Dict[str, Any]:
        """Poll a job until it ends; return it when it succeeded, raise
        GenlensError with the job's error when it failed or was canceled,
        TimeoutError after timeout seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            j = self.job(job_id)
            status = j.get("status")
            if status == "succeeded":
                return j
            if status in ("failed", "canceled"):
                err = j.get("error") or {}
                raise GenlensError(
                    err.get("message") or err.get("error") or f"job {job_id} {status}",
                    kind=err.get("kind") or status,
                    field=err.get("field"),
                    index=err.get("index"),
                )
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"job {job_id} still {status} after {timeout} s")
            time.sleep(poll)

    def artifacts(self, job_id: str) -> List[Dict[str, Any]]:
        """The files a job wrote ({"name", "content_type", "size", "url"}):
        empty for a job that writes none (compare prints numbers only;
        stats writes stats.npz, mse fit its check model)."""
        return list(self.job(job_id).get("artifacts") or [])

    def artifact(self, job_id: str, name: str) -> bytes:
        """A file the job wrote, as bytes."""
        return self._request("GET", f"/api/v1/jobs/{urllib.parse.quote(job_id)}/artifacts/{urllib.parse.quote(name)}")

    # ------------------------------------------------------------ LLM proxy

    def llm_requests(
        self,
        since: Optional[str] = None,
        min_uncertainty: Optional[float] = None,
        order: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> List[Dict[str, Any]]:
        """The chat completions the proxy answered, newest first (or most
        uncertain first with order="uncertainty")."""
        q = {"since": since, "min_uncertainty": min_uncertainty, "order": order, "limit": limit}
        return self._json("GET", "/api/v1/llm/requests", query=q)["requests"]

    # ------------------------------------------------------------ transport

    def _json(self, method: str, path: str, body: Any = None, query: Optional[Mapping[str, Any]] = None, **kw: Any) -> Any:
        raw = self._request(method, path, body, query, **kw)
        return json.loads(raw) if raw else None

    def _request(
        self,
        method: str,
        path: str,
        body: Any = None,
        query: Optional[Mapping[str, Any]] = None,
        raw: Optional[bytes] = None,
        content_type: str = "application/json",
    ) -> bytes:
        url = self.url + path
        q = {k: v for k, v in (query or {}).items() if v is not None}
        if q:
            url += "?" + urllib.parse.urlencode(q)
        data = raw
        if data is None and body is not None:
            try:
                data = json.dumps(body, allow_nan=False, default=json_value).encode()
            except ValueError as e:  # a NaN or infinity json cannot write
                raise GenlensError(f"{method} {path}: {e}: the service takes finite numbers only", kind="input") from None
        req = urllib.request.Request(url, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", content_type)
        req.add_header("Accept", "application/json")
        if self.token:
            req.add_header("Authorization", "Bearer " + self.token)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return resp.read()
        except urllib.error.HTTPError as e:
            payload = e.read()
            try:
                doc = json.loads(payload)
            except ValueError:
                doc = None
            if isinstance(doc, dict) and "error" in doc:
                raise GenlensError.from_document(doc, status=e.code) from None
            raise GenlensError(f"{method} {path}: HTTP {e.code} {payload[:200]!r}", status=e.code) from None


def _text(v: Any) -> str:
    """A row id as text (an integer id of a DataFrame, say)."""
    if isinstance(v, str):
        return v
    return str(v.item() if hasattr(v, "item") else v)


def _rfc3339(t: Any) -> str:
    """A timestamp cell as RFC 3339 text; a datetime without a time zone
    is taken as UTC."""
    if isinstance(t, str):
        return t
    if hasattr(t, "isoformat"):
        s = t.isoformat()
        return s + "Z" if getattr(t, "tzinfo", None) is None else s
    return str(t)


def _finite(kind: str, i: int, rid: Any, field: str, v: Any) -> None:
    """Raise, as the service's 422 reads, for a value that is not a finite
    number (JSON has no NaN or infinity to send it as)."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return  # not a number at all: the service says what it wants
    if math.isfinite(f):
        return
    where = f"{kind}[{i}]" + (f" (id {rid!r})" if rid is not None else "")
    raise GenlensError(
        f"{where} {field}: {v!r} is not a finite number (JSON has no NaN or infinity, and the service "
        "refuses them); drop the row or fill the value; nothing of this batch was sent",
        kind="input",
        field=field,
        index=i,
    )


def _frame_rows(df: Any, id: str, prediction: str, timestamp: Optional[str]) -> List[Dict[str, Any]]:
    """The rows of a DataFrame as the service takes them."""
    missing = [c for c in (id, prediction, timestamp) if c is not None and c not in df.columns]
    if missing:
        raise GenlensError(
            f"rows: the DataFrame has no column {missing[0]!r} (its columns: {', '.join(map(str, df.columns))}); "
            "name the id, prediction and timestamp columns with id=, prediction=, timestamp=",
            kind="input",
            field="rows",
        )
    names = [c for c in df.columns if c not in (id, prediction, timestamp)]
    out = []
    for r in df.to_dict(orient="records"):
        row: Dict[str, Any] = {
            "id": _text(r[id]),
            "features": {str(c): r[c] for c in names},
            "prediction": r[prediction],
        }
        if timestamp is not None and not is_missing(r[timestamp]):
            row["timestamp"] = _rfc3339(r[timestamp])
        out.append(row)
    return out


__all__ = ["Client"]
