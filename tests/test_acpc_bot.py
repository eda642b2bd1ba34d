"""Bots over the ACPC protocol: the game definition a compact file carries, the dealer and
its match states, matches between the C bot (efgs_acpc) and the Python bot (efgkit bot)
whose result lies within the 95% interval of efgkit's duplicate match, and bad input
(damaged files, another game, malformed dealer lines) ending the C bot, built with
AddressSanitizer and UndefinedBehaviorSanitizer, in one stderr line before any action."""

import shutil
import socket
import subprocess
import threading
import time

import numpy as np
import pytest

from efgkit.abstraction.cards.holdem.bucket_file import StreetBuckets, save_buckets
from efgkit.abstraction.cards.holdem.features import hand_indexer
from efgkit.cli import main
from efgkit.interop.acpc import game_definition
from efgkit.interop.acpc_protocol import (
    VERSION_LINE,
    AcpcBetting,
    AcpcDealer,
    AcpcDeck,
    MatchState,
    ProtocolError,
    play_acpc,
    serve_in_thread,
)
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import IsomorphicCards, LosslessCards
from efgkit.poker.streamed.match import HeadToHead
from efgkit.specs import make_game
from efgkit.storage import compact_gamedef, compact_reader
from efgkit.storage.acpc_bot import open_policy
from efgkit.storage.bucket_strategy import save_bucket_strategy
from efgkit.storage.compact_holdem import export_bucket_strategy
from efgkit.storage.compact_reader import CompactStrategy

C_SOURCES = compact_reader.__file__.rsplit("/", 1)[0] + "/efgs_c"


def _always(layout, action):
    return layout.pure(lambda labels: labels.index(action) if action in labels else labels.index("call"))


@pytest.fixture(scope="module")
def bots(tmp_path_factory):
    """efgs_acpc and its sanitizer builds, made by the Makefile."""
    if shutil.which("make") is None or (shutil.which("cc") or shutil.which("gcc")) is None:
        pytest.skip("no make or C compiler on this machine")
    folder = tmp_path_factory.mktemp("bin")
    subprocess.run(["make", "-s", "-C", C_SOURCES, f"OUT={folder}", "all", "sanitize"], check=True)
    return folder


@pytest.fixture(scope="module")
def leduc(tmp_path_factory):
    """Leduc on the lossless abstraction: A random (exported .efgs), B always raising (.h5)."""
    folder = tmp_path_factory.mktemp("leduc")
    game = make_game("leduc")
    layout = BucketLayout(BettingTree(game), LosslessCards(game))
    a, b = layout.random(0), _always(layout, "raise")
    export = export_bucket_strategy(layout, a, folder / "a.efgs", bits=8)
    save_bucket_strategy(folder / "b.h5", layout, b, {"algorithm": "always raise", "iterations": 0})
    export_bucket_strategy(layout, b, folder / "b.efgs", bits=8)
    exact = HeadToHead(layout, export.dequantized(), layout, b).run()
    return {"game": game, "layout": layout, "a": folder / "a.efgs", "b_h5": folder / "b.h5",
            "b": folder / "b.efgs", "exact": exact.mean}


@pytest.fixture(scope="module")
def holdem(tmp_path_factory):
    """holdem(ranks=5) on random pipeline buckets (7, 30, 40, 50): A random (.efgs), B
    always calling (.h5)."""
    folder = tmp_path_factory.mktemp("holdem")
    rng = np.random.default_rng(0)
    streets = []
    streets_buckets = zip(("preflop", "flop", "turn", "river"), (7, 30, 40, 50), strict=True)
    for r, (street, count) in enumerate(streets_buckets):
        indexer = hand_indexer((0, 3, 4, 5)[r], 5)
        size = indexer.round_size(indexer.num_rounds - 1)
        labels = np.concatenate([np.arange(count), rng.integers(0, count, size - count)])
        streets.append(StreetBuckets(street, labels, np.zeros((count, 1)), "random", "none", 0.0, 0))
    save_buckets(folder / "buckets.h5", 5, streets, {"test": True})
    game = make_game("holdem(ranks=5)")
    layout = BucketLayout(BettingTree(game), IsomorphicCards.from_bucket_file(game, folder / "buckets.h5"))
    a, b = layout.random(0), _always(layout, "call")
    export = export_bucket_strategy(layout, a, folder / "a.efgs", bits=8)
    save_bucket_strategy(folder / "b.h5", layout, b, {"algorithm": "always call", "iterations": 0})
    return {"game": game, "layout": layout, "a": folder / "a.efgs", "b_h5": folder / "b.h5",
            "a_played": export.dequantized(), "b_strategy": b}


# ------------------------------------------------------------------ game definition
def test_a_compact_file_carries_its_acpc_game_definition(leduc, holdem, tmp_path):
    for case in (leduc, holdem):
        with CompactStrategy(str(case["a"])) as strategy:
            strategy.verify()  # the payload CRC covers the definition
            assert strategy.game_definition == game_definition(case["game"]).text()
    main(["export", str(holdem["a"]), "--gamedef", str(tmp_path / "h.game")], standalone_mode=False)
    assert (tmp_path / "h.game").read_text() == game_definition(holdem["game"]).text()


def test_export_gamedef_without_out_needs_an_efgs_file(leduc, tmp_path, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["export", str(leduc["b_h5"]), "--gamedef", str(tmp_path / "x.game")])
    assert exited.value.code == 2 and "reads an .efgs file" in capsys.readouterr().err
    assert not (tmp_path / "x.game").exists()


# ------------------------------------------------------------------ match states
def test_match_states_replay_the_limit_rules_of_the_game():
    definition = game_definition(make_game("holdem(ranks=5)"))
    deck = AcpcDeck(definition)
    assert deck.names[:5] == ["Ts", "Th", "Td", "Tc", "Js"]
    first = MatchState.parse("MATCHSTATE:0:0::AsKh|", definition, deck)
    assert not first.to_act() and first.betting.legal() == "fcr"  # reverse blinds: 1 opens
    later = MatchState.parse("MATCHSTATE:1:3:rc/crrrr:|AsKh/TdJdQd", definition, deck)
    assert later.to_act() and later.betting.legal() == "fc"  # four bets capped on the flop
    assert later.board == [deck.ids[c] for c in ("Td", "Jd", "Qd")]
    end = MatchState.parse("MATCHSTATE:1:3:rc/cc/cc/cc:QsQh|AsKh/TdJdQd/Tc/Jc", definition, deck)
    assert end.betting.finished and end.betting.spent == [20, 20]
    for bad in ("MATCHSTATE:0:0:cc:AsKh|", "MATCHSTATE:0:0:cf:AsKh|", "MATCHSTATE:0:0::AsAs|",
                "MATCHSTATE:0:0:rc/:AsKh|", "MATCHSTATE:0:0::As2h|", "MATCHSTATE:2:0::AsKh|"):
        with pytest.raises(ProtocolError):
            MatchState.parse(bad, definition, deck)
    assert AcpcBetting.parse(definition, "rrrc/").text() == "rrrc/"


# ------------------------------------------------------------------ matches
def _match(definition, hands, seats, seed=0):
    """Play ``seats`` (each a callable given its port, returning a Popen or None) through a
    duplicate dealer; (MatchResult, C bots' stdout lines)."""
    dealer = AcpcDealer(definition, hands, seed=seed, duplicate=True, timeout=30)
    thread, outcome = serve_in_thread(dealer)
    processes = [seat(port) for seat, port in zip(seats, dealer.ports, strict=True)]
    thread.join()
    outputs = []
    for process in processes:
        if process is not None:
            out, err = process.communicate(timeout=30)
            assert process.returncode == 0, err
            outputs.append(out)
    assert "error" not in outcome, outcome.get("error")
    return outcome["result"], outputs


def _c_bot(binary, path, seed):
    return lambda port: subprocess.Popen([str(binary), str(path), "127.0.0.1", str(port), str(seed)],
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _python_bot(path, game=None, seed=0):
    policy, definition, close = open_policy(path, game)

    def start(port):
        def run():
            try:
                play_acpc("127.0.0.1", port, definition, policy, seed=seed, timeout=30)
            finally:
                close()
        threading.Thread(target=run, daemon=True).start()
        return None
    return start


def _within_interval(result, expected):
    mean, _, half = result.interval(0)
    assert result.invalid_actions == (0, 0)
    assert result.totals[0] == -result.totals[1]
    assert abs(mean - expected) <= half, (mean, half, expected)


def test_c_bot_against_the_python_bot_matches_the_exact_duplicate_value_in_leduc(bots, leduc):
    result, outputs = _match(game_definition(leduc["game"]), 4000,
                             [_c_bot(bots / "efgs_acpc", leduc["a"], 1),
                              _python_bot(leduc["b_h5"], leduc["game"], seed=2)])
    _within_interval(result, leduc["exact"])
    assert leduc["exact"] < -3 * result.interval(0)[1]  # A loses clearly: seats and signs matter
    assert int(outputs[0].split()[1]) > 4000


def test_two_c_bots_match_the_exact_duplicate_value_in_leduc(bots, leduc):
    result, _ = _match(game_definition(leduc["game"]), 4000,
                       [_c_bot(bots / "efgs_acpc", leduc["a"], 3), _c_bot(bots / "efgs_acpc", leduc["b"], 4)],
                       seed=5)
    _within_interval(result, leduc["exact"])


def test_c_bot_against_the_python_bot_in_reduced_holdem_agrees_with_the_duplicate_match(bots, holdem):
    """holdem(ranks=5): the protocol match and efgkit's duplicate match (2000 boards, every
    pair of hands) agree within the 95% interval of their difference."""
    result, _ = _match(game_definition(holdem["game"]), 2000,
                       [_c_bot(bots / "efgs_acpc", holdem["a"], 1),
                        _python_bot(holdem["b_h5"], holdem["game"])])
    layout = holdem["layout"]
    reference = HeadToHead(layout, holdem["a_played"], layout, holdem["b_strategy"], seed=0).run(2000)
    mean, error, _ = result.interval(0)
    assert result.invalid_actions == (0, 0)
    assert abs(mean - reference.mean) <= 1.96 * np.hypot(error, reference.standard_error), (
        mean, error, reference.mean, reference.standard_error)


def test_efgkit_bot_plays_a_compact_file_from_the_command_line(leduc, capsys):
    dealer = AcpcDealer(game_definition(leduc["game"]), 20, seed=1, timeout=30)
    thread, outcome = serve_in_thread(dealer)
    other = _python_bot(leduc["b"], seed=1)
    other(dealer.ports[1])
    main(["bot", str(leduc["a"]), "127.0.0.1", str(dealer.ports[0]), "--json"], standalone_mode=False)
    thread.join()
    assert outcome["result"].invalid_actions == (0, 0)
    assert '"actions"' in capsys.readouterr().out


# ------------------------------------------------------------------ bad input
class FakeDealer:
    """Sends ``lines`` to one bot and records what it answers (``stop()`` if no bot comes)."""

    def __init__(self, lines: list[bytes]) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.05)
        self.port = self.listener.getsockname()[1]
        self.received = b""
        self.closed_by_bot = False  # the bot closed the connection (not the dealer's read timeout)
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._serve, args=(lines,), daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join()

    def _serve(self, lines):
        with self.listener:
            while True:
                try:
                    connection, _ = self.listener.accept()
                    break
                except TimeoutError:
                    if self.stopped.is_set():
                        return
        with connection:
            connection.settimeout(30)
            try:
                # the bot's version line first: a bot that stops at a bad line with the next one
                # unread resets the connection, which would drop what is still unread here
                while b"\n" not in self.received and (chunk := connection.recv(4096)):
                    self.received += chunk
                connection.settimeout(1)
                for line in lines:
                    connection.sendall(line)
                time.sleep(0.1)
                while chunk := connection.recv(4096):
                    self.received += chunk
                self.closed_by_bot = True
            except OSError:
                pass


MALFORMED = [
    b"GARBAGE\r\n",
    b"MATCHSTATE:0:0::\r\n",
    b"MATCHSTATE:5:0::AsKh|\r\n",
    b"MATCHSTATE:1:0:rrrrrrrr:|AsKh\r\n",
    b"MATCHSTATE:1:0:cc:|AsKh\r\n",
    b"MATCHSTATE:1:0:cr:|AsAs\r\n",
    b"MATCHSTATE:1:0:cr:|AsXx\r\n",
    b"MATCHSTATE:1:0:cr:|As2h\r\n",
    b"MATCHSTATE:1:0:cc/:|AsKh\r\n",
    b"MATCHSTATE:1:0:cc/:|AsKh/TdJd\r\n",
    b"MATCHSTATE:1:0:cc/c:|AsKh/TdJdQd/Tc\r\n",
    b"MATCHSTATE:1:99999999999:cr:|AsKh\r\n",
    b"MATCHSTATE:1:0:cr:|As\x00Kh\r\n",
    b"MATCHSTATE:1:0:cr:|AsKh" + b"x" * 5000 + b"\r\n",
    b"MATCHSTATE:1:0:cr:|AsK",  # the dealer closes inside a line
]


def _run_c(binary, path, lines):
    dealer = FakeDealer(lines)
    process = subprocess.run([str(binary), str(path), "127.0.0.1", str(dealer.port), "1"],
                             capture_output=True, text=True, timeout=60)
    dealer.stop()
    return process, dealer.received


@pytest.mark.parametrize("build", ["efgs_acpc_asan", "efgs_acpc_ubsan"])
def test_the_c_bot_answers_a_valid_line_and_stops_cleanly_at_each_malformed_one(bots, holdem, build):
    process, received = _run_c(bots / build, holdem["a"], [b"MATCHSTATE:1:0:cr:|AsKh\r\n"])
    assert process.returncode == 0 and process.stderr == ""
    assert received.decode().startswith(VERSION_LINE + "\r\nMATCHSTATE:1:0:cr:|AsKh:")
    for line in MALFORMED:
        process, received = _run_c(bots / build, holdem["a"], [line, b"MATCHSTATE:1:0:cr:|AsKh\r\n"])
        assert process.returncode == 2, (line, process.stderr)
        assert process.stderr.count("\n") == 1 and process.stderr.startswith("efgs_acpc: "), process.stderr
        assert received == f"{VERSION_LINE}\r\n".encode(), line  # no action was drawn


@pytest.mark.parametrize("build", ["efgs_acpc_asan", "efgs_acpc_ubsan"])
def test_the_c_bot_refuses_damaged_files_and_another_game(bots, holdem, leduc, tmp_path, build):
    data = holdem["a"].read_bytes()
    damaged = {"truncated": data[:len(data) // 2],
               "one byte": data[:200] + bytes([data[200] ^ 1]) + data[201:],
               "definition": data[:-30] + b"X" + data[-29:], "empty": b""}
    for name, content in damaged.items():
        path = tmp_path / f"{name}.efgs"
        path.write_bytes(content)
        process, received = _run_c(bots / build, path, [b"MATCHSTATE:1:0:cr:|AsKh\r\n"])
        assert process.returncode == 2 and process.stderr.startswith("efgs_acpc: "), (name, process.stderr)
        assert received == b"", name  # refused before connecting
    # a Leduc strategy seated at a hold'em table: the first line does not fit its game
    process, received = _run_c(bots / build, leduc["a"], [b"MATCHSTATE:1:0:cr:|AsKh\r\n"])
    assert process.returncode == 2 and process.stderr.count("\n") == 1, process.stderr
    assert received == f"{VERSION_LINE}\r\n".encode()


def test_the_c_bot_refuses_a_file_without_a_game_definition(bots, leduc, tmp_path, monkeypatch):
    monkeypatch.setattr(compact_gamedef, "acpc_text", lambda game: None)
    layout = leduc["layout"]
    export_bucket_strategy(layout, layout.random(0), tmp_path / "bare.efgs")
    process, _ = _run_c(bots / "efgs_acpc", tmp_path / "bare.efgs", [])
    assert process.returncode == 2 and "carries no ACPC game definition" in process.stderr


def test_efgkit_bot_stops_at_a_malformed_line_with_one_error(holdem, capsys):
    for line in MALFORMED:
        dealer = FakeDealer([line])
        with pytest.raises(SystemExit) as exited:
            main(["bot", str(holdem["a"]), "127.0.0.1", str(dealer.port), "--timeout", "5"])
        dealer.stop()
        assert exited.value.code == 2, line
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("efgkit: error:"), err
        assert dealer.received == f"{VERSION_LINE}\r\n".encode()
        # the bot closes at once, not when its socket is garbage collected (the dealer's 1 s
        # read timeout); a line the dealer leaves unfinished the bot cannot end before the dealer
        assert dealer.closed_by_bot or not line.endswith(b"\n"), line
