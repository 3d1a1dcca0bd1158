"""Memories that come to mind, weighed by meaning where the server has an
embeddings endpoint: a real OpenAI-compatible client against a fake server
whose /v1/embeddings places texts by a few words' meaning (no real server
here embeds), on a real SQLite file."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from omoide.characters.model import Character
from omoide.chat.session import ChatSession
from omoide.config.settings import Settings
from omoide.domain.chat import Role
from omoide.llm import static_embeddings
from omoide.llm.openai_compat import OpenAICompatBackend
from omoide.store import Store
from tests.fakeservers import chat_reply
from tests.scripted import ScriptedBackend

MIKA = Character(id="mika", name="Mika", first_message="*waves* Hi!")
MARKET = "The cat, the cat, the cat ran off with the market cat."
COZY = "My cat Biscuit-1001 sleeps by the radiator."
SENSES = ({"cozy", "night", "sleeps", "radiator", "warm", "bed"}, {"market", "ran", "street", "off"})


def meaning(text: str) -> list[float]:
    words = set(re.findall(r"[a-z]+", text.lower()))
    return [float(len(words & sense)) for sense in SENSES] + [0.5]


class Server(ThreadingHTTPServer):
    daemon_threads = True
    embeddings = True
    asked: list[list[str]]
    tries = 0


class Handler(BaseHTTPRequestHandler):
    server: Server

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
        if self.path == "/v1/chat/completions":
            self.send(200, chat_reply("Mm."), "text/event-stream")
        elif self.path == "/v1/embeddings" and self.server.embeddings:
            self.server.tries += 1
            self.server.asked.append(body["input"])
            data = [{"object": "embedding", "index": i, "embedding": meaning(t)} for i, t in enumerate(body["input"])]
            self.send(200, json.dumps({"object": "list", "data": data}).encode(), "application/json")
        else:
            self.server.tries += self.path == "/v1/embeddings"
            self.send(404, b'{"error": "not found"}', "application/json")

    def do_GET(self) -> None:  # noqa: N802
        self.send(404, b'{"error": "not found"}', "application/json")

    def send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def server() -> Iterator[Server]:
    found = Server(("127.0.0.1", 0), Handler)
    found.asked = []
    threading.Thread(target=found.serve_forever, daemon=True).start()
    yield found
    found.shutdown()
    found.server_close()


async def two_cats(store: Store) -> int:
    chat = await store.chats.create("mika", greeting="*waves* Hi!")
    head = await store.messages.add(chat.id, chat.head_id, Role.USER, COZY)
    head = await store.messages.add(chat.id, head.id, Role.USER, MARKET)
    for i in range(10):
        head = await store.messages.add(chat.id, head.id, Role.ASSISTANT if i % 2 == 0 else Role.USER, f"Line {i}: tea and bread.")
    await store.memory.add_summary(chat.id, head.id, content="Tea.", covers_to_id=head.id, diary_to_id=None)
    return chat.id


async def came_to_mind(store: Store, server: Server, **kw: Any) -> tuple[str, str]:
    settings = Settings(user_name="Kai", base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", summary_threshold=10_000,
                        recall_passages=1, world_idle_hours=10_000, **kw)
    session = await ChatSession.open(store, MIKA, settings, OpenAICompatBackend(settings.backend), chat_id=await two_cats(store))
    for _ in range(2):
        [_ async for _ in session.send("Does your cat feel cozy at night?")]
    prompt = session.last_prompt
    assert prompt is not None
    [layer] = [layer.text for layer in prompt.layers if layer.name == "passages"]
    [why] = prompt.passages
    return layer, why


async def test_meaning_from_the_servers_embeddings_picks_the_passage_that_means_it(store: Store, server: Server) -> None:
    layer, why = await came_to_mind(store, server)
    assert COZY in layer and MARKET not in layer
    assert "meaning 1.00" in why
    assert server.asked and server.asked[0][0] == "Does your cat feel cozy at night?"


async def test_without_an_embeddings_endpoint_it_is_asked_once_and_the_installed_vectors_still_find(
        store: Store, server: Server) -> None:
    server.embeddings = False
    _, why = await came_to_mind(store, server)
    assert re.search(r"meaning 0\.\d\d", why) and not server.asked and server.tries == 1


async def test_with_neither_the_words_decide(store: Store, server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(static_embeddings, "available", lambda: False)
    server.embeddings = False
    layer, why = await came_to_mind(store, server)
    assert MARKET in layer, "by words alone, the message that says 'cat' four times"
    assert "meaning" not in why and not server.asked and server.tries == 1


async def test_recall_passages_meaning_off_never_asks_for_embeddings(store: Store, server: Server) -> None:
    layer, why = await came_to_mind(store, server, recall_passages_meaning=False)
    assert MARKET in layer and "meaning" not in why and server.tries == 0


BICYCLE = "We finally named our bicycle Rocket, because it's fast and a bit reckless."
DAYS = ["The tea was too strong again.", "Rain all afternoon, so I read.", "The bakery sold out of bread.",
        "My neighbour painted his fence.", "The harbour smelled of salt.", "I lost an umbrella on the tram."]


async def asked_about_the_bike(store: Store, **kw: Any) -> tuple[str, list[str]]:
    """A chat that told of the bicycle twenty messages ago, asked about "my bike": no word in common."""
    chat = await store.chats.create("mika", greeting="*waves* Hi!")
    head = await store.messages.add(chat.id, chat.head_id, Role.USER, BICYCLE)
    for i in range(20):
        head = await store.messages.add(chat.id, head.id, Role.ASSISTANT if i % 2 == 0 else Role.USER, DAYS[i % len(DAYS)])
    await store.memory.add_summary(chat.id, head.id, content="Ordinary days.", covers_to_id=head.id, diary_to_id=None)
    settings = Settings(user_name="Kai", summary_threshold=10_000, world_idle_hours=10_000, **kw)
    session = await ChatSession.open(store, MIKA, settings, ScriptedBackend(), chat_id=chat.id)
    [_ async for _ in session.send("How is my bike doing, do you think?")]
    prompt = session.last_prompt
    assert prompt is not None
    layers = [layer.text for layer in prompt.layers if layer.name == "passages"]
    return (layers[0] if layers else ""), prompt.passages


async def test_a_passage_that_shares_no_word_comes_to_mind_by_meaning(store: Store) -> None:
    layer, why = await asked_about_the_bike(store)
    assert BICYCLE in layer
    assert any("Kai: near in meaning" in line and "meaning 0." in line for line in why)


async def test_with_meaning_off_only_words_bring_passages_back(store: Store) -> None:
    layer, _ = await asked_about_the_bike(store, recall_passages_meaning=False)
    assert BICYCLE not in layer


async def test_the_vectors_are_kept_with_the_messages_and_a_new_session_reads_them(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    layer, _ = await asked_about_the_bike(store)
    assert BICYCLE in layer
    kept = await store.db.one("SELECT count(*) FROM message_vectors")
    assert kept is not None and kept[0] >= 20, "every message that left the window has its vector stored"
    made: list[int] = []
    real = static_embeddings.vectors
    monkeypatch.setattr(static_embeddings, "vectors", lambda texts: (made.append(len(texts)), real(texts))[1])
    chat = await store.chats.latest("mika")
    assert chat is not None
    session = await ChatSession.open(store, MIKA, Settings(user_name="Kai", summary_threshold=10_000, world_idle_hours=10_000),
                                     ScriptedBackend(), chat_id=chat.id)
    [_ async for _ in session.send("How is my bike doing, do you think?")]
    prompt = session.last_prompt
    assert prompt is not None and any(BICYCLE in layer.text for layer in prompt.layers if layer.name == "passages")
    assert sum(made) <= 4, f"only the query and the messages that left the window since: {made}"


async def test_a_long_chats_first_reply_does_not_wait_for_its_vectors(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """A chat whose vectors are not made yet (an imported one): the turn makes a
    few, the reply comes while the rest are made in the background, and the next
    turns find by meaning among all of them."""
    from omoide.memory import meaning as meaning_module

    monkeypatch.setattr(meaning_module, "FOREGROUND_EMBED", 4)
    monkeypatch.setattr(meaning_module, "CATCH_UP_BATCH", 8)
    release = threading.Event()
    real = static_embeddings.vectors

    def slow_in_the_background(texts: list[str]) -> Any:
        if len(texts) > 4:  # a background batch: held until the reply has come
            assert release.wait(30), "the reply never came while the vectors were being made"
        return real(texts)

    monkeypatch.setattr(static_embeddings, "vectors", slow_in_the_background)
    chat = await store.chats.create("mika", greeting="*waves* Hi!")
    head = await store.messages.add(chat.id, chat.head_id, Role.USER, "Nothing much today.")
    for i in range(40):
        head = await store.messages.add(chat.id, head.id, Role.ASSISTANT if i % 2 == 0 else Role.USER, DAYS[i % len(DAYS)])
    head = await store.messages.add(chat.id, head.id, Role.USER, BICYCLE)
    for i in range(20):
        head = await store.messages.add(chat.id, head.id, Role.ASSISTANT if i % 2 == 0 else Role.USER, DAYS[i % len(DAYS)])
    await store.memory.add_summary(chat.id, head.id, content="Ordinary days.", covers_to_id=head.id, diary_to_id=None)
    settings = Settings(user_name="Kai", summary_threshold=10_000, world_idle_hours=10_000)
    session = await ChatSession.open(store, MIKA, settings, ScriptedBackend(), chat_id=chat.id)
    [_ async for _ in session.send("How is my bike doing, do you think?")]
    newest = (await session.transcript(limit=1))[-1]
    assert newest.role == "assistant", "the reply came before the vectors"
    kept = await store.db.one("SELECT count(*) FROM message_vectors")
    assert kept is not None and kept[0] <= 8, "only the turn's own steps were made before the reply"
    release.set()
    await session.wait_for_memory_work()
    kept = await store.db.one("SELECT count(*) FROM message_vectors")
    assert kept is not None and kept[0] >= 60, "the rest were made in the background and kept"
    [_ async for _ in session.send("How is my bike doing, do you think?")]
    prompt = session.last_prompt
    assert prompt is not None and any(BICYCLE in layer.text for layer in prompt.layers if layer.name == "passages")
    await session.aclose()


GREETINGS = ["Hey Mika, good to see you!", "Thanks, Mika!", "Mika, you're the best.", "Morning, Mika!",
             "Night, Mika.", "Mika! Hi again."]


async def test_the_speakers_names_do_not_bring_lines_nearer_in_meaning(store: Store) -> None:
    """A name weighs as much as what is asked in an average of a few words: asked
    "Mika, how is my bike doing?", every "Thanks, Mika!" would come before the bicycle."""
    chat = await store.chats.create("mika", greeting="*waves* Hi!")
    head = await store.messages.add(chat.id, chat.head_id, Role.USER, BICYCLE)
    for i in range(24):
        head = await store.messages.add(chat.id, head.id, Role.USER if i % 2 else Role.ASSISTANT,
                                        GREETINGS[i // 2 % len(GREETINGS)] if i % 2 else DAYS[i // 2 % len(DAYS)])
    await store.memory.add_summary(chat.id, head.id, content="Ordinary days.", covers_to_id=head.id, diary_to_id=None)
    settings = Settings(user_name="Kai", summary_threshold=10_000, world_idle_hours=10_000, recall_passages=3)
    session = await ChatSession.open(store, MIKA, settings, ScriptedBackend(), chat_id=chat.id)
    [_ async for _ in session.send("Mika, how is my bike doing, do you think?")]
    prompt = session.last_prompt
    assert prompt is not None
    layer = next(layer.text for layer in prompt.layers if layer.name == "passages")
    assert BICYCLE in layer, layer
    assert not any(greeting in layer for greeting in GREETINGS), layer
