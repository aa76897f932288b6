"""``sbatch --k8s-lint`` on bad command-line values (a login-side command: its table needs
tabulate, which pod-side images do not have)."""

def test_lint_reports_bad_command_line_values(tmp_path, monkeypatch, capsys):
    from sbatch_k8s.cli.common import run_command
    from sbatch_k8s.cli.sbatch import _main

    (tmp_path / "job.sh").write_text("#!/bin/sh\ntrue\n")
    monkeypatch.chdir(tmp_path)
    assert run_command("sbatch", _main, ["--k8s-lint", "--time=abc", "job.sh"]) == 1
    assert "--time=abc  invalid  Invalid --time specification" in capsys.readouterr().out
