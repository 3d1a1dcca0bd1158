"""Models: the embedded ones, recommended downloads, discovered servers, `omoide models`."""
