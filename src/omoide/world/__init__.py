"""World memory: what each character carries out of a conversation, about
itself, about the user and about other characters. It spans chats, so it is
not anchored to one message tree: versioned rows plus an append-only update
log naming the conversation (chat + message range) and message behind each change.

    model.py       the shapes: fields, participants, conversations, updates, views
    familiarity.py the only number here, and the only field no model writes
    mentions.py    finding other characters' names in messages (offscreen gossip)
    steps.py       one LLM call per step, each with its own template
    conversation.py the end-of-conversation pass for N participants
    keeper.py      when a conversation ends, running passes in the background,
                   and what a branch restore does to their updates
    prompt.py      the world block of a character's prompt and the mention notes
"""
