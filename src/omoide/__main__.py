"""`python -m omoide`: the same as the `omoide` command."""

from omoide.launch import main

if __name__ == "__main__":
    main()
