"""A schemathesis run over `vidocr serve`'s OpenAPI spec against the real app and index: generated requests to
every operation (valid and not), and no answer is a 5xx."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

pytest.importorskip("fastapi")
pytest_plugins = ["support.serve_fixtures"]

import schemathesis  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402
from support.serve_fixtures import copy_library  # noqa: E402

if TYPE_CHECKING:
    from support.serve_fixtures import Library


@pytest.fixture(scope="module")
def api_schema(serve_library: Library, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The spec of an app over a private copy of the library (generated requests save edits and export)."""
    from vidocr.serve.app import create_app

    library = copy_library(serve_library, tmp_path_factory.mktemp("schema"))
    app = create_app(library.settings(max_upload_bytes=100_000))
    return schemathesis.openapi.from_asgi("/api/v1/openapi.json", app)


def test_no_operation_answers_a_server_error(api_schema: Any) -> None:
    # schemathesis' own pytest plugin does not run under pytest 9: each operation's strategy is driven here
    from hypothesis import given

    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 15
    statuses: list[int] = []
    for operation in operations:

        @settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        @given(case=operation.as_strategy())
        def check(case: Any) -> None:
            response = case.call()
            statuses.append(response.status_code)
            assert response.status_code < 500, (case.method, case.formatted_path, case.query, response.text[:300])
            ctype = (response.headers.get("content-type") or [""])[0]
            assert ctype.startswith(("application/json", "image/", "video/", "text/", "application/x-subrip")), ctype

        check()
    assert sum(200 <= code < 300 for code in statuses) >= 10  # not only refusals: valid requests were made too


def test_the_spec_covers_every_api_route(api_schema: Any) -> None:
    paths = set(api_schema.raw_schema["paths"])
    assert {"/api/v1/search", "/api/v1/videos/{video_id}/cues", "/api/v1/jobs/{job_id}", "/api/v1/uploads",
            "/api/v1/videos/{video_id}/export", "/api/v1/cues/{cue_id}/band"} <= paths
