"""The official NAS-Bench-201 importer, on a small benchmark built with the package's own classes."""

from __future__ import annotations

import itertools
from collections import OrderedDict

import numpy as np
import pytest
import torch
from nas_201_api import NASBench201API
from nas_201_api.api_utils import ArchResults, ResultsCount

from nasviz.cli import main
from nasviz.objectives import load_table
from nasviz.objectives.nb201_official import import_official, load_official, official_rows
from nasviz.spaces import nb201

#: The evaluation sets each dataset has in the official file.
SETS = {"cifar10-valid": ("x-valid", "ori-test"), "cifar10": ("ori-test",),
        "cifar100": ("x-valid", "x-test", "ori-test"), "ImageNet16-120": ("x-valid", "x-test", "ori-test")}
SEEDS = (777, 888)
ARCHS = [nb201.format(a) for a in itertools.islice(nb201.enumerate_all(), 0, 4000, 1000)]  # 4 cells


def accuracy(arch: int, dataset: str, setname: str, seed: int, epochs: int) -> float:
    """A distinct, known final accuracy for every (arch, dataset, set, seed, schedule)."""
    return (40.0 + 10 * arch + list(SETS).index(dataset) + 0.25 * SETS[dataset].index(setname)
            + (0.5 if seed == SEEDS[1] else 0.0) + (20.0 if epochs == 200 else 0.0))


def epoch_seconds(arch: int, dataset: str, seed: int) -> float:
    return 1.0 + arch + 0.1 * list(SETS).index(dataset) + (0.02 if seed == SEEDS[1] else 0.0)


def trial(i: int, dataset: str, seed: int, epochs: int) -> ResultsCount:
    config = {"name": "infer.tiny", "channel": 16, "num_cells": 5, "arch_str": ARCHS[i], "class_num": 10}
    per_epoch = {e: 30.0 + e * 0.1 for e in range(epochs)}
    # numpy scalars, as in the real file: they make torch's weights_only=True refuse the file
    result = ResultsCount(dataset, None, per_epoch, {e: 1.0 for e in range(epochs)}, np.float64(0.8),
                          np.float64(80.0), config, seed, epochs, [np.float64(0.01)])
    result.update_train_info(per_epoch, None, {e: 1.0 for e in range(epochs)},
                             OrderedDict((e, epoch_seconds(i, dataset, seed)) for e in range(epochs)))
    accs = {f"{s}@{e}": accuracy(i, dataset, s, seed, epochs) - (0 if e == epochs - 1 else 7.0)
            for s in SETS[dataset] for e in range(epochs)}
    result.update_eval(accs, {k: 0.5 for k in accs}, {k: 0.2 for k in accs})
    return result


def arch_results(i: int, epochs: int, datasets) -> dict:
    res = ArchResults(i, ARCHS[i])
    for dataset in datasets:
        for seed in SEEDS:
            res.update(dataset, seed, trial(i, dataset, seed, epochs))
    return res.state_dict()


def benchmark(evaluated=(0, 1, 3), full_datasets=None) -> dict:
    """Like NAS-Bench-201 v1.0: 200 epochs on all datasets, 12 epochs on cifar10-valid only."""
    full_datasets = full_datasets or {}
    return {
        "meta_archs": ARCHS,
        "arch2infos": {i: {"less": arch_results(i, 12, ["cifar10-valid"]),
                           "full": arch_results(i, 200, full_datasets.get(i, list(SETS)))} for i in evaluated},
        "evaluated_indexes": set(evaluated),
    }


@pytest.fixture(scope="module")
def official_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("nb201") / "NAS-Bench-201-tiny.pth"
    torch.save(benchmark(), path)
    return path


def mean(f, *args) -> float:
    return float(np.mean([f(*args[:-1], seed, args[-1]) if f is accuracy else f(*args, seed) for seed in SEEDS]))


def test_the_official_file_imports_into_a_table_with_the_right_values(official_file, tmp_path):
    with pytest.raises(Exception):  # what the package's own loader meets on torch >= 2.6
        torch.load(official_file)
    out = tmp_path / "nb201.csv"
    assert import_official(official_file, out) == 3  # index 2 was never evaluated
    table = load_table(out)
    assert table.bad_rows == [] and table.strings == [ARCHS[0], ARCHS[1], ARCHS[3]]
    assert table.metrics == ["cifar10", "cifar100", "ImageNet16-120", "cifar10-valid", "cifar100-valid",
                             "ImageNet16-120-valid"]
    assert table.cost_column == "cifar10_seconds"
    for row, i in enumerate((0, 1, 3)):
        expect = {
            "cifar10": ("cifar10", "ori-test"), "cifar100": ("cifar100", "x-test"),
            "ImageNet16-120": ("ImageNet16-120", "x-test"), "cifar10-valid": ("cifar10-valid", "x-valid"),
            "cifar100-valid": ("cifar100", "x-valid"), "ImageNet16-120-valid": ("ImageNet16-120", "x-valid"),
        }
        for column, (dataset, setname) in expect.items():
            want = np.mean([accuracy(i, dataset, setname, s, 200) for s in SEEDS])  # mean over seeds, last epoch
            assert table.values[column][row] == pytest.approx(want), (column, i)
        seconds = np.mean([200 * epoch_seconds(i, "cifar10", s) for s in SEEDS])
        assert table.costs[row] == pytest.approx(seconds)
    assert "cifar100_seconds" in out.read_text().splitlines()[0]


def test_values_agree_with_the_package_api(official_file, tmp_path):
    data = load_official(official_file)
    api = NASBench201API(data, verbose=False)
    header, rows, notes = official_rows(api)
    assert (header, rows, notes) == official_rows(data)
    info = api.query_meta_info_by_index(1, hp="200")
    assert rows[1][header.index("cifar100")] == pytest.approx(info.get_metrics("cifar100", "x-test")["accuracy"])
    assert import_official(api, tmp_path / "from_api.csv") == 3


def test_twelve_epochs_keeps_only_what_every_architecture_has(official_file, tmp_path):
    out = tmp_path / "12.csv"
    with pytest.warns(UserWarning, match="column 'cifar10' dropped: 3 of 3 architectures lack it.*'cifar100' dropped"):
        assert import_official(official_file, out, epochs=12) == 3
    table = load_table(out)
    assert table.metrics == ["cifar10-valid"] and table.cost_column == "cifar10-valid_seconds"
    assert table.values["cifar10-valid"][2] == pytest.approx(np.mean([accuracy(3, "cifar10-valid", "x-valid", s, 12)
                                                                      for s in SEEDS]))


def test_a_dataset_some_architectures_lack_is_dropped_with_a_warning(tmp_path):
    data = benchmark(full_datasets={3: ["cifar10-valid", "cifar10", "cifar100"]})
    header, rows, notes = official_rows(data)
    assert notes == [f"column {c!r} dropped: 1 of 3 architectures lack it for the 200-epoch schedule"
                     for c in ("ImageNet16-120", "ImageNet16-120-valid", "ImageNet16-120_seconds")]
    with pytest.warns(UserWarning, match="'ImageNet16-120' dropped: 1 of 3"):
        import_official(data, tmp_path / "t.csv")
    assert "ImageNet16-120" not in header and "cifar100" in header and len(rows) == 3
    header, _, notes = official_rows(data, datasets=["cifar100"])
    assert header == ["arch", "cifar100", "cifar100-valid", "cifar100_seconds"] and notes == []


def test_bad_files_and_arguments_are_refused_clearly(tmp_path, official_file):
    with pytest.raises(ValueError, match="does not exist"):
        import_official(tmp_path / "missing.pth", tmp_path / "x.csv")
    junk = tmp_path / "junk.pth"
    junk.write_bytes(b"not a torch file")
    with pytest.raises(ValueError, match="could not be read as a torch file"):
        import_official(junk, tmp_path / "x.csv")
    other = tmp_path / "other.pth"
    torch.save({"state_dict": {}}, other)
    with pytest.raises(ValueError, match="no 'meta_archs', 'arch2infos', 'evaluated_indexes'"):
        import_official(other, tmp_path / "x.csv")
    with pytest.raises(ValueError, match="epochs must be 12 or 200"):
        import_official(official_file, tmp_path / "x.csv", epochs=90)
    with pytest.raises(ValueError, match="unknown dataset"):
        import_official(official_file, tmp_path / "x.csv", datasets=["mnist"])
    assert not (tmp_path / "x.csv").exists()  # nothing half-written


def test_the_cli_command_converts_the_file(official_file, tmp_path, capsys):
    out = tmp_path / "cli.csv"
    assert main(["table", "import-nb201", str(official_file), "--out", str(out), "--datasets", "cifar10,cifar100"]) == 0
    assert "wrote 3 rows" in capsys.readouterr().out
    assert load_table(out).metrics == ["cifar10", "cifar100", "cifar100-valid"]
    assert main(["table", "import-nb201", str(tmp_path / "nope.pth"), "--out", str(out)]) == 2
    assert "does not exist" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["table", "import-nb201", "--help"])
    assert "restricted unpickler" in capsys.readouterr().out


def test_a_file_written_with_numpy_1_loads_with_the_restricted_unpickler(tmp_path):
    """The official file dates from numpy 1, whose scalars pickle as ``numpy.core.multiarray.scalar``
    (numpy 2 says ``numpy._core``): the allow-list admits both names. Written here in torch's legacy
    format, as a 2020 file may be, with the module renamed as numpy 1 wrote it."""
    import io

    buffer = io.BytesIO()
    torch.save(benchmark(), buffer, _use_new_zipfile_serialization=False)
    data = buffer.getvalue()
    assert b"numpy._core.multiarray" in data
    old = tmp_path / "NAS-Bench-201-numpy1.pth"
    old.write_bytes(data.replace(b"numpy._core.multiarray", b"numpy.core.multiarray"))
    assert import_official(old, tmp_path / "old.csv") == 3
    assert load_table(tmp_path / "old.csv").strings == [ARCHS[0], ARCHS[1], ARCHS[3]]
