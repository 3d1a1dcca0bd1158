"""The prompt, decided in one place: `build.build_prompt` takes what the chat
session gathered (`PromptInputs`) and decides every layer from it.

Ordered from the most stable to the most volatile, so that between two memory
checkpoints each turn only appends to the previous prompt and every prompt
cache (llama.cpp, vLLM, OpenAI, Anthropic) reuses the prefix:

    system   card: rules, persona, character, scenario, examples, constant lore
             profile: what is true about the user in every story
             world: the character's world memory (changes when a conversation ends)
             pinned: the facts pinned to the character (changes when a pin does;
                     never dropped by the fit, never summarised)
             memory: the diary and the summary as of the last checkpoint (on a
                     play script, the summary as of its last rewrite)
             memos: the memo book's newest pages before the window (memo styles)
    window   the messages no summary covers, timestamped, oldest first (on a play
             script, with each summary part since the rewrite where it was
             written: memory/timeline.py)
    system   volatile tail: memories that come to mind (memory/passages.py),
             date and time, diary lines since the checkpoint, lore triggered
             this turn, memos you wrote since, notes on absent characters just
             mentioned, post-history instructions

    model.py   the shapes: the inputs, the decided context, layers, the assembled prompt
    build.py   build_prompt: lore and its budget, amnesia, profile, world and gossip,
               the fit to the context, the prefix shared with the previous prompt
    layers.py  the text of each layer, and their assembly into messages
    fit.py     counting the whole prompt once, and the fullest prompt that fits (and,
               when the card itself must be cut, which of its fields and how much)
    sent.py    what is sent of stored text: your messages' macros, the card's regex scripts
"""
