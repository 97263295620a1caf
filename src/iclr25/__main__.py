from iclr25.cli import main

if __name__ == "__main__":  # not when a doctest run imports the module
    main()
