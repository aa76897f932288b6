"""The grammar loader: lazy lark, LALR tables that build, zipapp loading, error translation."""

import os
import pkgutil
import subprocess
import sys
import zipfile
from pathlib import Path

import lark
import pytest

import parsers.values
from parsers.input_errors import ValueSyntaxError
from parsers.values.grammar import load_parser, parse_value
from parsers.values.time import TimeTransformer

ROOT = Path(__file__).resolve().parents[3]
GRAMMARS = sorted(p.stem for p in Path(parsers.values.__file__).parent.glob("*.lark"))
MODULES = sorted(
    m.name for m in pkgutil.iter_modules(parsers.values.__path__) if m.name != "grammar"
)


#: Value languages read by hand: hostranges (hostlist's numeric ranges), begin (parse_time's
#: error names the byte where the C scan stopped, which only the same scan reproduces),
#: acctg_freq (a comma list of ``type=N`` checked item by item, naming the bad item).
SCANNED = {"hostranges", "begin", "acctg_freq"}


def test_every_module_has_its_grammar():
    assert set(MODULES) - SCANNED == set(GRAMMARS)


@pytest.mark.parametrize("name", GRAMMARS)
def test_grammar_builds_as_lalr(name):
    parser = load_parser(name)
    assert parser.options.parser == "lalr"
    assert load_parser(name) is parser  # cached per process


def test_importing_the_values_does_not_import_lark():
    imports = "; ".join(f"import parsers.values.{m}" for m in MODULES + ["grammar"])
    code = f"import sys; {imports}; print('lark' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
    assert out.stdout.strip() == "False"


def test_grammars_load_from_a_zipapp(tmp_path):
    archive = tmp_path / "app.pyz"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in (ROOT / "parsers").rglob("*"):
            if path.suffix in (".py", ".lark"):
                zf.write(path, path.relative_to(ROOT).as_posix())
    code = "from parsers.values.hostlist import expand_hostlist; print(expand_hostlist('n[1-2]'))"
    lark_dir = str(Path(lark.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(archive), lark_dir])}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, env=env, check=True)
    assert out.stdout.strip() == "['n1', 'n2']"


def test_lark_errors_become_value_syntax_errors():
    with pytest.raises(ValueSyntaxError) as caught:
        parse_value("time", "1:2:3:4", TimeTransformer)
    assert isinstance(caught.value.__cause__, lark.exceptions.LarkError)
