"""``-M``/``--clusters`` as Slurm 22.05 reads it (each case observed on the real Slurm of
tools/real-slurm, cluster ``realslurm``; here the known cluster is ``c``)."""

from __future__ import annotations

import pytest

from parsers.input_errors import SlurmInputError
from parsers.report_options.clusters import (FROM_ENVIRONMENT, FROM_OPTION, choose_clusters,
                                             sacct_clusters)
from parsers.report_options.sacct_options import parse_sacct_args

REACH = "can't be reached now, or it is an invalid entry for {}.  Use 'sacctmgr list " \
        "clusters' to see available clusters."


@pytest.mark.parametrize("text, skipped", [
    ("c", ()), ("all", ()), ("ALL", ()), ("All", ()), ("c,c", ()), (",c", ()),
    ("c,bogus", ("No cluster 'bogus' known by database.",)),
    ("bogus,c", ("No cluster 'bogus' known by database.",)),
])
def test_a_list_naming_the_cluster_chooses_it(text: str, skipped: tuple) -> None:
    assert choose_clusters(text, "c") == (("c",), skipped)


@pytest.mark.parametrize("text, source, lines", [
    ("bogus", FROM_OPTION, ["No cluster 'bogus' known by database.",
                            "'bogus' " + REACH.format("--cluster")]),
    ("bogus,bogus2", FROM_ENVIRONMENT, ["No cluster 'bogus' known by database.",
                                        "No cluster 'bogus2' known by database.",
                                        "'bogus,bogus2' " + REACH.format("SLURM_CLUSTERS")]),
    # "all" is every cluster only as the whole value
    ("all,bogus", FROM_OPTION, ["No cluster 'all' known by database.",
                                "No cluster 'bogus' known by database.",
                                "'all,bogus' " + REACH.format("--cluster")]),
    (" c", FROM_OPTION, ["No cluster ' c' known by database.", "' c' " + REACH.format(
        "--cluster")]),
])
def test_a_list_naming_no_known_cluster_is_refused(text: str, source: str,
                                                   lines: list) -> None:
    with pytest.raises(SlurmInputError) as e:
        choose_clusters(text, "c", source)
    assert list(e.value.lines) == lines and e.value.exit_code == 1


@pytest.mark.parametrize("text, chosen", [
    ("all", None), ("ALL", None), ("-1", None), ("c", ("c",)), ("c,", ("c",)),
    ("all,bogus", ("all", "bogus")), ("bogus", ("bogus",)),
])
def test_sacct_filters_by_name(text: str, chosen: object) -> None:
    assert sacct_clusters(text) == chosen
    query = parse_sacct_args(["--clusters", text, "-X"], {}, 0)
    assert query.clusters == chosen
