"""Object names: slugs of the job name, bounded by the names Kubernetes derives."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parsers.input_errors import SlurmInputError
from translators.naming import DNS_LABEL_MAX, job_name_to_slug, unit_names
from translators.targets import TARGETS
from tests.unit.translators.support import render_script, script, workload


@pytest.mark.parametrize("job_name, slug", [
    ("hello", "hello"),
    ("My Job!", "my-job"),
    ("train_v2.sh", "train-v2-sh"),
    ("a--b__c", "a-b-c"),
    ("-edge-", "edge"),
    ("123abc", "j123abc"),
    ("___", "job"),
    ("", "job"),
    ("données", "donn-es"),
])
def test_slug(job_name: str, slug: str) -> None:
    assert job_name_to_slug(job_name) == slug


def test_slug_truncation_does_not_end_in_a_dash() -> None:
    assert job_name_to_slug("abcd-efgh", 5) == "abcd"


@pytest.mark.parametrize("target, pods, longest", [
    ("indexed-job", 100, "{name}-99-abcde"),    # a pod: the Job controller's name
    ("jobset", 100, "{name}-node-0-99-abcde"),
    ("pytorchjob", 100, "{name}-worker-98"),
    ("pytorchjob", 1, "{name}-master-0"),
    ("mpijob", 100, "{name}-launcher-abcde"),  # the launcher Job's pod
    ("mpijob", 1, "{name}-launcher-abcde"),
])
def test_longest_derived_name_fits(target: str, pods: int, longest: str) -> None:
    name, = unit_names("x" * 80, ["1234567"], pods, TARGETS[target])
    assert name.endswith("-1234567")
    assert len(longest.format(name=name)) == DNS_LABEL_MAX


def test_array_element_names_share_one_slug() -> None:
    names = unit_names("y" * 80, ["77-1", "77-1000"], 2, TARGETS["indexed-job"])
    assert [n.rsplit("-", 2)[0] for n in names] == [names[0].rsplit("-", 2)[0]] * 2
    assert max(len(n) for n in names) + len("-1-abcde") == DNS_LABEL_MAX


def test_impossible_names_are_refused() -> None:
    with pytest.raises(SlurmInputError):
        unit_names("job", ["9" * 60], 10, TARGETS["jobset"])


def test_rendered_name_is_slug_dash_job_id() -> None:
    result = render_script(script('--job-name="My_Training Run"'), job_id=42)
    assert workload(result)["metadata"]["name"] == "my-training-run-42"
    assert result.object_name == "my-training-run-42"
    assert {m["metadata"]["name"] for m in result.manifests} == {"my-training-run-42"}


def test_default_job_name_is_the_script_name() -> None:
    result = render_script(script(), script_path="run.sbatch")
    assert workload(result)["metadata"]["name"] == "run-sbatch-1234"


DNS_1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")


@settings(max_examples=300, deadline=None)
@given(job_name=st.text(max_size=120), job_id=st.integers(1, 2**31 - 1),
       pods=st.integers(1, 100000), target=st.sampled_from(sorted(TARGETS)))
def test_every_derived_name_is_a_dns_label(job_name, job_id, pods, target) -> None:
    traits = TARGETS[target]
    name, = unit_names(job_name, [str(job_id)], pods, traits)
    assert DNS_1035.match(name)
    for pattern, back in traits.derived_names:
        if back is None or pods - back >= 0:
            derived = pattern.format(name=name, index=pods - (back or 0))
            assert len(derived) <= DNS_LABEL_MAX and DNS_1035.match(derived), derived
