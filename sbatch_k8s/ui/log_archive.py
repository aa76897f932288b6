"""Every log of a job in one zip: each node's log and its output files, byte for byte.

The archive is written to a temporary file (logs can be larger than memory should hold)
and read back by the caller. A log that cannot be read is left out and named in the
archive's ``MISSING.txt`` with the reason: nothing is dropped without a word.
"""

from __future__ import annotations

import tempfile
import time
import zipfile
from typing import IO, List

from parsers.job_records import JobRecord
from sbatch_k8s.ui.jobs_source import JobsSource

MISSING = "MISSING.txt"


def write_archive(source: JobsSource, record: JobRecord) -> IO[bytes]:
    """The zip of ``record``'s logs, open for reading from its start."""
    archive = tempfile.TemporaryFile(prefix="sbatch-k8s-ui-")
    folder = f"job-{record.job_id_text}"
    missing: List[str] = []
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zipped:
        for described in source.log_sources(record):
            if not described.available:
                missing.append(f"{described.file_name}: {described.why}")
                continue
            handle = source.log(record, described.key)
            if handle is None:
                missing.append(f"{described.file_name}: gone")
                continue
            try:
                member_info = zipfile.ZipInfo(f"{folder}/{described.file_name}",
                                              time.localtime()[:6])
                member_info.compress_type = zipfile.ZIP_DEFLATED
                with zipped.open(member_info, "w", force_zip64=True) as member:
                    for chunk in handle.chunks():
                        member.write(chunk)
            except Exception as e:  # one unreadable log must not lose the others
                missing.append(f"{described.file_name}: {type(e).__name__}: {e}")
        if missing:
            zipped.writestr(f"{folder}/{MISSING}", "".join(f"{line}\n" for line in missing))
    archive.seek(0)
    return archive
