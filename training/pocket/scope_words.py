"""English word lists and templates for the pocket model's out-of-scope prompts (see :mod:`scope`).

A tiny template language: a line ``@name: a|b|c`` adds values to the slot ``name`` (several may share
a line), any other line holds templates separated by `` // ``; ``== kind`` starts a section. In a
template ``{name}`` is a random value of the slot, ``{a:name}`` the same after "a" or "an", and
``[x|y|]`` one of the alternatives. Nothing asks for a computation, the weather or a known question.
"""

SLOTS = """
@country: Germany|Spain|Italy|Portugal|the Netherlands|Belgium|Switzerland|Austria|Poland|Sweden|Norway|Denmark|Finland
@country: Iceland|Ireland|Greece|Turkey|Russia|Ukraine|Hungary|the Czech Republic|Romania|Bulgaria|Croatia|Serbia|Japan
@country: China|South Korea|India|Pakistan|Indonesia|Thailand|Vietnam|the Philippines|Malaysia|Australia|New Zealand
@country: Canada|Mexico|Brazil|Argentina|Chile|Peru|Colombia|Venezuela|Cuba|Egypt|Morocco|Nigeria|Kenya|Ethiopia|Ghana
@country: South Africa|Tanzania|Saudi Arabia|Iran|Iraq|Israel|Jordan|Mongolia|Kazakhstan|Nepal|Bhutan|Sri Lanka|Latvia
@country: Bangladesh|Estonia|Lithuania|Luxembourg|Monaco|Madagascar|Uruguay|Bolivia|Ecuador|Jamaica|Fiji
@country: the United States|the UK|Scotland|Wales|Senegal|Tunisia @us_state: California|Texas|New York|Florida|Alaska
@us_state: Hawaii|Nevada|Ohio|Oregon|Illinois|Michigan|Colorado|Vermont|Maine @region: Quebec|Bavaria|Catalonia|Ontario
@region: Queensland|Scotland|Tasmania|Sicily|Siberia|Texas|Australia's Northern Territory @city: Tokyo|Paris|London
@city: New York|Rome|Barcelona|Berlin|Amsterdam|Lisbon|Prague|Vienna|Budapest|Istanbul|Cairo|Seoul|Marrakech|Cape Town
@city: Nairobi|Dubai|Mumbai|Delhi|Bangkok|Hanoi|Beijing|Shanghai|Hong Kong|Singapore|Sydney|Lima|Toronto|Vancouver
@city: Mexico City|Rio de Janeiro|Buenos Aires|Havana|San Francisco|Chicago|Los Angeles|Seattle|Boston|Kyoto|Edinburgh
@city: Dublin|Copenhagen|Stockholm|Oslo|Helsinki|Reykjavik|Athens|Venice @continent: Africa|Asia|Europe|South America
@continent: North America|Oceania|Antarctica @animal: koala|elephant|giraffe|penguin|octopus|dolphin|kangaroo|zebra
@animal: cheetah|sloth|hedgehog|owl|bat|beetle|ant|bee|butterfly|crab|lobster|starfish|snake|frog|turtle|crocodile
@animal: horse|cow|goat|chicken|duck|cat|dog|rabbit|hamster|parrot|eagle|shark|whale|jellyfish|squid|camel|llama|panda
@animal: gorilla|lion|tiger|wolf|fox|bear|moose|deer|mouse|squirrel|pig|sheep|ostrich|flamingo|centipede|scorpion
@animal: mosquito|fly|lizard|seal|platypus|armadillo|raccoon|otter|beaver|hippo|rhino|capybara|axolotl|hummingbird
@animal: peacock|swan|gecko|chameleon|tick|ladybug|worm|snail|praying mantis|flea|tardigrade|orca
@person: Albert Einstein|Marie Curie|Isaac Newton|Cleopatra|Julius Caesar|Napoleon|Genghis Khan|Leonardo da Vinci
@person: Nikola Tesla|Ada Lovelace|Alan Turing|Frida Kahlo|Nelson Mandela|Mahatma Gandhi|Martin Luther King
@person: Abraham Lincoln|Joan of Arc|Confucius|Socrates|Plato|Aristotle|Charles Darwin|Galileo Galilei|Mozart|Beethoven
@person: Vincent van Gogh|Pablo Picasso|Rosa Parks|Winston Churchill|Marco Polo|Alexander the Great
@person: Christopher Columbus|Amelia Earhart|Neil Armstrong|Sigmund Freud|Karl Marx|Harriet Tubman
@invention: the telephone|the light bulb|the printing press|the airplane|the internet|the World Wide Web|the radio
@invention: paper|television|the computer|the steam engine|the bicycle|the car|the microwave oven|the refrigerator
@invention: the camera|the piano|gunpowder|the compass|the wheel|the telescope|the microscope|the smartphone
@discovery: gravity|penicillin|DNA|electricity|radioactivity|the electron|oxygen|X-rays|Pluto|the Higgs boson|insulin
@event: World War I|World War II|the French Revolution|the fall of the Berlin Wall|the Moon landing|the Cold War
@event: the Renaissance|the Industrial Revolution|the American Civil War|the Russian Revolution|the Black Death
@event: the Great Depression|the Cuban Missile Crisis|the Reformation|the Apollo 11 mission|the sinking of the Titanic
@event: the Chernobyl disaster|the Crusades|the Arab Spring @empire: the Roman Empire|the Ottoman Empire
@empire: the Mongol Empire|the Aztec Empire|the Inca Empire|the Byzantine Empire|the British Empire|the Persian Empire
@empire: the Mali Empire|the Han dynasty|the Ming dynasty|the Soviet Union @concept: photosynthesis|inflation
@concept: a black hole|quantum entanglement|machine learning|blockchain|democracy|capitalism|the placebo effect
@concept: the stock market|a neural network|an API|a VPN|cryptocurrency|the greenhouse effect|plate tectonics
@concept: natural selection|the theory of relativity|the immune system|a mortgage|the Turing test|utilitarianism
@concept: the trolley problem|mindfulness|intermittent fasting|impressionism|stoicism|karma @diff: a virus and bacteria
@diff: a crocodile and an alligator|affect and effect|baking soda and baking powder|RAM and storage
@diff: a latte and a cappuccino|Python and JavaScript|a turtle and a tortoise|a frog and a toad|a rabbit and a hare
@diff: stocks and bonds|jam and jelly|HTTP and HTTPS|a comet and an asteroid @dish: lasagna|pad thai|banana bread
@dish: pancakes|sushi|guacamole|chicken curry|risotto|ramen|tiramisu|apple pie|hummus|falafel|paella|chili con carne
@dish: beef stew|mac and cheese|Caesar salad|French toast|chocolate chip cookies|pho|sourdough bread|bibimbap|shakshuka
@dish: carbonara|tacos|brownies|pesto|miso soup|gazpacho|butter chicken|kimchi|dumplings @protein: chicken|tofu|salmon
@protein: eggs|ground beef|chickpeas|lentils|canned tuna|shrimp|black beans|pork chops|halloumi @veg: spinach|potatoes
@veg: rice|pasta|mushrooms|zucchini|broccoli|sweet potatoes|leftover rice|tomatoes|cabbage|noodles @food: chocolate
@food: avocado|peanut butter|cheese|popcorn|garlic|bread|rice|coffee|honey|dark chocolate|red meat|tofu|sushi|oatmeal
@food: yogurt|ginger|coconut oil|pasta|sugar|milk @sport: football|soccer|basketball|tennis|cricket|baseball|rugby|golf
@sport: ice hockey|volleyball|table tennis|badminton|chess @team_sport: soccer|basketball|baseball|rugby|ice hockey
@team_sport: volleyball|water polo|cricket|American football|handball @tournament: World Cup|Super Bowl
@tournament: Champions League|Tour de France|NBA Finals|Euro|Stanley Cup|Ballon d'Or|Wimbledon @year: 1966|1970|1986
@year: 1990|1994|1998|2002|2006|2010|2014|2018|2022|2003|2008|2012|2016|2019|2021|1999|2005|2011 @movie: Inception
@movie: The Godfather|Titanic|Pulp Fiction|The Matrix|Spirited Away|Parasite|Casablanca|Jurassic Park|Up|Coco
@movie: The Shawshank Redemption|Interstellar|Amélie|The Lion King|Star Wars|Back to the Future|Forrest Gump|Fight Club
@movie: Gladiator|Avatar|Oppenheimer|Barbie|Dune|Toy Story|Finding Nemo @genre: horror|comedy|sci-fi|romantic|action
@genre: animated|documentary|thriller|fantasy|war|crime|feel-good|Korean|anime @band: The Beatles|Queen|ABBA|Radiohead
@band: Beyoncé|Taylor Swift|BTS|Nirvana|Pink Floyd|Daft Punk|Metallica|Adele|Bob Dylan|Kendrick Lamar|Bob Marley
@band: Shakira|Coldplay|Billie Eilish|Led Zeppelin|Rosalía|Björk @song: Bohemian Rhapsody|Imagine|Hotel California
@song: Hey Jude|Smells Like Teen Spirit|Billie Jean|Like a Rolling Stone|Despacito|Yesterday|Stairway to Heaven
@song: Wonderwall|Hallelujah|Dancing Queen|Thriller|Blinding Lights @instrument: guitar|piano|violin|drums|ukulele
@instrument: saxophone|flute|cello|harp|trumpet|bass guitar|banjo|clarinet|accordion @strings: guitar|violin|cello
@strings: ukulele|bass guitar|banjo|harp|viola|mandolin|sitar|double bass|twelve-string guitar @book: Hamlet|Macbeth
@book: Pride and Prejudice|1984|Moby-Dick|War and Peace|Don Quixote|The Great Gatsby|Frankenstein|To Kill a Mockingbird
@book: Crime and Punishment|The Odyssey|Dracula|Jane Eyre|Wuthering Heights|The Hobbit|The Little Prince
@book: One Hundred Years of Solitude|Les Misérables|The Divine Comedy|The Catcher in the Rye|Brave New World
@book: Animal Farm|The Lord of the Rings|Harry Potter|The Alchemist|Anna Karenina|Dune|Fahrenheit 451|Of Mice and Men
@book: The Old Man and the Sea|Little Women|Faust|Oliver Twist|A Tale of Two Cities|A Midsummer Night's Dream
@book: Things Fall Apart|Norwegian Wood|The Count of Monte Cristo @painting: the Mona Lisa|The Starry Night|The Scream
@painting: Guernica|The Last Supper|The Birth of Venus|The Night Watch|Girl with a Pearl Earring
@painting: The Persistence of Memory|American Gothic|The Great Wave off Kanagawa|The Kiss @piece: the Moonlight Sonata
@piece: The Four Seasons|The Magic Flute|Swan Lake|The Nutcracker|Clair de Lune|Boléro|Carmen|The Rite of Spring
@piece: The Blue Danube|Für Elise|The Marriage of Figaro|Rhapsody in Blue|the Ode to Joy @substance: iron|gold|silver
@substance: copper|aluminum|lead|mercury|ethanol|alcohol|olive oil|milk|salt water|sea water|butter|chocolate|wax|glass
@substance: nitrogen|oxygen|helium|hydrogen|tungsten|steel|titanium|sulfur|acetone|vinegar @point: boiling|melting
@point: freezing @superlative: largest ocean|smallest country in the world|longest river in the world
@superlative: longest river in {continent}|tallest building in the world|highest mountain in {continent}|deepest lake
@superlative: deepest part of the ocean|largest desert|largest moon in the solar system|smallest planet|hottest planet
@superlative: coldest place on Earth|largest mammal|smallest mammal|fastest animal|fastest land animal|largest bird
@superlative: biggest fish|oldest city in the world|largest country|largest country in {continent}
@superlative: smallest country in {continent}|most spoken language|biggest city in {country}|largest island
@superlative: largest organ in the human body|largest snake|biggest star|closest star to Earth|largest rainforest
@days_in: a year|a leap year|February|April|June|September|November|December|January|March|October|July|August|May
@days_in: a lunar month|a year on Mars|a school year|February in a leap year @month: February|April|June|September
@month: November|December|January|March|October|July|August|May @part: legs|eyes|teeth|hearts|wings|bones|toes|stomachs
@part: arms @language: Spanish|French|German|Italian|Japanese|Mandarin|Korean|Arabic|Russian|Portuguese|Hindi|Swahili
@language: Dutch|Greek|Turkish|Polish|Latin|Vietnamese|Hebrew|Swedish|Esperanto @phrase: where is the train station
@phrase: thank you very much|I love you|I'm lost|cheers|happy birthday|I don't understand|can I have the bill, please
@phrase: excuse me|I'm vegetarian|where is the bathroom|see you tomorrow|my name is Anna|I would like a coffee
@phrase: good luck|congratulations|I miss you @foreign_phrase: je ne sais pas|ich habe Hunger|dónde está la biblioteca
@foreign_phrase: grazie mille|obrigado pela ajuda|nie rozumiem|ik hou van je|mi casa es su casa|wie spät ist es
@foreign_phrase: tengo sueño|ça ne fait rien|hasta la vista|carpe diem @foreign_word: hygge|saudade|wabi-sabi
@foreign_word: schadenfreude|déjà vu|ikigai|hakuna matata|je ne sais quoi|zeitgeist|fernweh|lagom|mañana|sobremesa
@foreign_word: komorebi|kintsugi|hiraeth|bon appétit|touché|c'est la vie|dolce far niente|sisu @eng_word: serendipity
@eng_word: ubiquitous|ephemeral|quixotic|sonder|defenestration|onomatopoeia|pragmatic|nostalgia|esoteric|sycophant
@eng_word: gaslighting|rizz|mid|ghosting|FOMO|YOLO|cringe|no cap|sus|based|bussin|gatekeeping|delulu|slay @adj: happy
@adj: big|beautiful|important|difficult|smart|tired|interesting|fast|angry|good|bad|strange|cheap|lazy|funny
@spell: necessary|definitely|separate|conscience|rhythm|accommodate|Wednesday|embarrass|restaurant|bureaucracy
@spell: entrepreneur|mischievous|questionnaire|occurrence|maintenance @plural_word: octopus|cactus|moose|mouse|goose
@plural_word: fish|person|child|deer|sheep|crisis|phenomenon|criterion|syllabus @asset: Bitcoin|gold|real estate
@asset: index funds|Tesla stock|Apple stock|Ethereum|government bonds|ETFs|NFTs|art|silver|dividend stocks|Nvidia
@asset: a Roth IRA|startups|vintage watches|Pokémon cards|a vacation home|crypto @tech_task: reset my router
@tech_task: speed up my laptop|take a screenshot on a Mac|clear my browser cache|recover a deleted file
@tech_task: change my Wi-Fi password|install Python on Windows|set up two-factor authentication
@tech_task: connect my phone to my TV|free up space on my iPhone|make a website|back up my photos|block spam calls
@tech_task: fix a slow internet connection|exit vim @versus: iPhone or Android|Mac or PC|Windows or Linux
@versus: Python or JavaScript|PlayStation or Xbox|vim or emacs|Chrome or Firefox|Spotify or Apple Music
@versus: Netflix or Disney+|tabs or spaces|coffee or tea|cats or dogs|the beach or the mountains|Marvel or DC
@versus: Star Wars or Star Trek|Messi or Ronaldo|pizza or burgers @product: laptop for students|password manager|VPN
@product: programming language to learn first|budget camera|gaming mouse|pair of noise-cancelling headphones|smartwatch
@product: e-reader|electric car|coffee machine|note-taking app @acronym: NASA|HTML|CPU|GPU|USB|NATO|UNESCO|ASAP|FAQ|PDF
@acronym: HTTP|JPEG|LASER|RAM|SQL|LLM|GDP|BRB|SCUBA|CAPTCHA|GIF|RSVP|FIFA|ETA|TBH|IMO|API|URL|DIY|FYI|IRL|OMG|CEO|PhD
@acronym: MBA|ATM|UFO|DVD @company: Apple|Microsoft|Google|Amazon|Tesla|IKEA|Nike|Samsung|Toyota|Sony|Nintendo|Netflix
@company: Spotify|Facebook|OpenAI|Adidas|LEGO|Coca-Cola|McDonald's|Starbucks|Rolex|Ferrari|Airbnb @place: Timbuktu
@place: the Bermuda Triangle|Machu Picchu|Angkor Wat|Petra|Easter Island|the Great Barrier Reef|Mount Everest
@place: the Sahara|Atlantis|Stonehenge|the Dead Sea|the Amazon rainforest|Chernobyl|Area 51|Niagara Falls
@place: the Grand Canyon @building: the pyramids|Stonehenge|the Great Wall of China|the Taj Mahal|the Colosseum
@building: Machu Picchu|the Eiffel Tower|Angkor Wat|the Parthenon|the Sagrada Família|the Statue of Liberty
@building: the Golden Gate Bridge|Petra @illness: the flu|COVID|diabetes|strep throat|a migraine|Lyme disease|burnout
@illness: dehydration|celiac disease|food poisoning|a panic attack|vitamin D deficiency|a sinus infection|pneumonia
@illness: chickenpox|measles|high blood pressure|appendicitis|a UTI @ailment: hiccups|a headache|a sore throat
@ailment: back pain|insomnia|acne|a cold|bad breath|dandruff|a hangover|heartburn|dry skin|a stiff neck|jet lag
@ailment: a stuffy nose|sunburn|a cough|cramps|a toothache|itchy eyes|a blister @life_task: ask for a raise
@life_task: make friends in a new city|stop procrastinating|become a morning person|tie a tie|apologize to a friend
@life_task: train my dog to sit|meditate|deal with anxiety|write a good resume|learn to swim|change a flat tire
@life_task: unclog a drain|grow tomatoes|stop overthinking|be more confident|wake up earlier|keep my plants alive
@life_task: learn to draw|write a novel|get into college|quit my job gracefully @harm: hotwire a car
@harm: steal my coworker's password|get into my sister's phone without her knowing|cheat on my exam
@harm: forge a doctor's note|make a fake ID|shoplift|hack my school's Wi-Fi|track my girlfriend's location secretly
@harm: evade taxes|spy on my roommate|buy drugs online|write a phishing email|make a computer virus
@harm: get revenge on my ex|hack into someone's Instagram|poison a dog|fake my own death|DDoS a website
@harm: read my wife's messages|steal a credit card number|bully someone online|cheat at online poker @form: poem
@form: short poem|haiku|limerick|sonnet|short story|bedtime story|song|rap verse|love letter|blog post|essay
@form: motivational speech|tweet|Instagram caption|LinkedIn post|product description|toast|fairy tale|horror story
@form: riddle|slogan|birthday message|wedding speech|thank-you note @topic: the ocean|my cat|my dog|autumn|friendship
@topic: coffee|space travel|a lonely robot|Monday mornings|the moon|hope|first love|pizza
@topic: a dragon who is afraid of fire|a lost sock|artificial intelligence|a haunted house|the first day of school
@topic: mountains|a cup of tea|the stars|a broken heart|a talking cactus|my hometown|a detective penguin|silence
@topic: a magical library|my new job|a time traveler @style: Shakespeare|Dr. Seuss|Edgar Allan Poe|Hemingway
@style: Emily Dickinson|a pirate|Yoda|Taylor Swift|a medieval knight|a 1920s detective|a sports commentator|Jane Austen
@style: Snoop Dogg|Gordon Ramsay|a cowboy|a tired teacher @recipient: boss|landlord|teacher|professor|coworker|client
@recipient: team|neighbor|doctor|manager|roommate|bank|mother-in-law @email_purpose: asking for a day off
@email_purpose: asking for a raise|about the broken heater|apologizing for missing the meeting
@email_purpose: to reschedule our meeting|saying I'm sick today|asking for an extension|complaining about the noise
@email_purpose: to say thank you|announcing my resignation|to introduce myself @job: software engineer
@job: marketing manager|nurse|barista|data analyst|graphic designer|teacher|sales assistant|project manager
@job: junior developer|customer support|receptionist|accountant|UX designer @advice: my first job interview
@advice: dealing with a difficult coworker|moving to a new city|getting over a breakup|starting a small business
@advice: learning to cook|public speaking|staying motivated|quitting smoking|making friends as an adult
@advice: asking someone out|studying for finals|dating|negotiating my salary|managing stress @goal: building muscle
@goal: losing weight|a complete beginner|running a marathon|getting more flexible|a busy parent
@subject: my chemistry exam|learning Japanese|the SAT|the bar exam|learning to code|my history final|a driving test
@relative: mom|dad|sister|brother|grandma|grandpa|best friend|daughter|son|wife|husband|girlfriend|boyfriend|boss
@occasion: their birthday|Christmas|our anniversary|graduation|Valentine's Day|a housewarming|retirement @count: five
@count: ten|some|a few|three|20|a dozen|creative|unusual|cheap @idea_topic: a date night|a YouTube channel|a startup
@idea_topic: a science fair project|a team-building activity|dinner tonight|a short story|a Halloween costume
@idea_topic: a company name|a fantasy novel|a podcast|a kid's birthday party|a weekend hobby|a blog @pet: new puppy|cat
@pet: goldfish|hamster|bakery|startup|band|podcast|boat|plant|car|YouTube channel|Wi-Fi network|robot @joke_topic: cats
@joke_topic: programmers|dogs|doctors|cheese|chickens|pirates|teachers|Mondays|coffee|penguins|lawyers|my job|computers
@joke_topic: vegetables|dinosaurs|the moon|history|skeletons|ghosts|pizza|chemistry|bananas|Germans|cows
@informal: hey can u send me the file asap|we gotta push the deadline again sorry|ur invoice is late pay it pls
@informal: lol i forgot the meeting|yo the server is down again|cant come today feel bad|need that report by friday
@bad_grammar: me and him goes to the store yesterday|their going to be late|i has finished my homework
@bad_grammar: she don't like it|the informations are wrong|i am agree with you|whose coming to the party
@bad_grammar: he go to school by bus everyday
@sentence: The meeting has been moved to Thursday afternoon because the projector is broken.
@sentence: I am writing to let you know that I will not be able to attend the conference.
@sentence: The new café on the corner serves the best croissants in town.
@sentence: My grandmother grew up in a small village by the sea.
@sentence: The train was delayed, so I missed the start of the movie. @prog_lang: JavaScript|TypeScript|Rust|Go|Java|C
@prog_lang: C++|C#|Ruby|PHP|Kotlin|Swift|Haskell|Bash|Lua|R|Scala|Perl|Julia|Elixir|Dart|OCaml|Clojure|Fortran|COBOL
@prog_lang: Zig|MATLAB|Visual Basic|Erlang|F#|Nim|Prolog|Lisp|Assembly @py_task: reverses a string
@py_task: checks if a word is a palindrome|removes duplicates from a list|reads a CSV file
@py_task: counts the vowels in a string|sends an email|validates an email address|downloads a web page
@py_task: merges two dictionaries|returns today's date|multiplies two numbers|subtracts two numbers
@py_task: adds an item to a list|concatenates two strings|adds two matrices|shuffles a list|generates a random password
@py_task: parses a JSON file|reads a text file line by line|returns the largest item in a list
@py_task: removes punctuation from text|implements binary search|retries a failing HTTP request
@code_howto: read a file|reverse a list|sort a dictionary by value|make an HTTP request|parse JSON|handle exceptions
@code_howto: write a unit test|create a class|use async/await|loop over a dictionary|format a string|install a package
@code_howto: split a string|connect to a database @module: numpy|pandas|requests|torch|flask|django|cv2|yaml|bs4
@module: sklearn|matplotlib|openai|dotenv|PIL @sql_task: finds all users who signed up last month
@sql_task: joins the orders and customers tables|deletes duplicate rows|finds employees without a manager
@sql_task: lists customers who never ordered|selects the newest post per author @regex_task: an email address
@regex_task: a US phone number|a URL|a hex color code|a postal code|words that start with a capital @other_ai: ChatGPT
@other_ai: Claude|Gemini|Siri|Alexa|Copilot|Llama|Grok|Mistral|DeepSeek|GPT-4|Bard @fav: color|food|movie|book|song
@fav: animal|season|band|word|programming language|city|number|emoji|game @opinion: Elon Musk|pineapple on pizza
@opinion: social media|remote work|cryptocurrency|the death penalty|TikTok|homework|modern art|nuclear power
@opinion: self-driving cars|video games|AI art|the meaning of life|religion|capitalism @bot_like: music|pizza|humans
@bot_like: your job|me|cats|talking to people|poetry|math|being an AI|jokes|philosophy @hobby: guitar|piano|Japanese
@hobby: to code|to cook|to knit|chess|to paint|to dance|Spanish|to skateboard|pottery @pname: Anna|Marcus|Priya|Tom
@pname: Sofia|Kenji|Fatima|Lucas|Emma|Oliver|Aisha|Diego|Chloe|Mateo|Hannah|Noah|Yuki|Leila|Sam|Ravi|Ingrid|Kwame|Mei
@pname: Jonas|Olga|Carlos @project: the website redesign|Project Atlas|the mobile app|the spring launch
@project: the onboarding flow|the data migration|the new billing system|the customer portal|the office move
@project: the hiring plan|the brand refresh|the API upgrade @weekday: Monday|Tuesday|Wednesday|Thursday|Friday
@weekday: next week|the end of the month|tomorrow @thing: the library|the old train station|the community garden
@thing: the bakery on Main Street|the museum|the bike lane
"""
"""The slots of the English templates."""

KINDS = """
== question
Who invented {invention}? // When was {invention} invented? // Who came up with {invention}?
Who discovered {discovery}? // Who was {person}? // Tell me about {person}. // What is {person} famous for?
When was {person} born? // What caused {event}? // Why did {event} happen? // Tell me about {event}.
When did {event} [happen|take place]? // Give me a quick summary of {event}. // How did {empire} fall?
Who founded {empire}? // Why is the sky blue? // How do airplanes fly? // Why do we dream?
How does the internet work? // What is DNA? // How do vaccines work? // Why do cats purr? // What is gravity?
How do magnets work? // Why is the ocean salty? // What causes earthquakes? // How do volcanoes form?
Why do leaves change color in autumn? // How does a rocket work? // What is the speed of light?
Is time travel possible? // What is dark matter? // How do bees make honey? // How does memory work?
How do birds migrate? // Why do we yawn? // What happens when we sleep? // What is the Big Bang?
How old is the universe? // Is there life on Mars? // How does GPS work? // Why does ice float? // How do plants grow?
Why do stars twinkle? // How do tides work? // What is evolution? // What causes the northern lights?
What is a virus? // Why do zebras have stripes? // Do fish sleep? // Can penguins fly? // How do bats see in the dark?
Why do flamingos stand on one leg? // Are octopuses smart? // How do chameleons change color? // What do {animals} eat?
What does {a:animal} eat? // Where do {animals} live? // How long do {animals} live? // Are {animals} dangerous?
Do {animals} sleep? // Is {a:animal} a mammal? // Can I keep {a:animal} as a pet? // What sound does {a:animal} make?
What is a baby {animal} called? // [What is|What's] {concept}? // How does {concept} work?
[What's|What is] the difference between {diff}? // Is {food} healthy? // Is it bad to have {food} every day?
Can dogs eat {food}? // What are the rules of {sport}? // How do you play {sport}?
Who is the best {sport} player of all time? // Who won the {tournament} in {year}? // Explain the offside rule.
When are the next Olympics? // Why is {sport} so popular? // Who directed {movie}? // Is {movie} worth watching?
What is {movie} about? // Explain the ending of {movie}. // What's a good {genre} movie to watch tonight?
Recommend {a:genre} series. // What is the best {band} album? // What genre is {band}? // Tell me about {band}.
Who sang {song}? // What is {song} about? // Who wrote the song {song}? // How do I learn to play the {instrument}?
Who painted {painting}? // Who composed {piece}? // What is {book} about? // Is {book} worth reading?
What are the main themes of {book}? // Books similar to {book}? // What does {acronym} stand for?
Who founded {company}? // When was {company} founded? // What does {company} do? // Who is the CEO of {company}?
What is the best {product}? // Which is better, {versus}? // {versus}? // What language do they speak in {country}?
What currency does {country} use? // What is the population of {country}? // What is {country} famous for?
What is the national dish of {country}? // Is {country} safe to visit? // Do I need a visa to go to {country}?
What continent is {country} in? // Which countries border {country}? // Who is the president of {country}?
What should I see in {city}? // What are the best things to do in {city}? // Where should I eat in {city}?
Is {city} expensive? // What's {city} known for? // Is {city} worth visiting? // What country is {city} in?
Where is {place}? // Tell me about {place}. // Why is {place} famous? // Who built {building}?
When was {building} built? // How do you say '{phrase}' in {language}? // What does '{foreign_word}' mean?
Is {language} hard to learn? // What's the best way to learn {language}? // What is the plural of '{plural_word}'?
How do you spell '{spell}'? // What does '{eng_word}' mean? // What's a synonym for '{adj}'?
What's the opposite of '{adj}'? // Is 'irregardless' a real word? // When should I use a semicolon?
What is the meaning of life? // Do we have free will? // Is there a God? // What happens after we die?
What is consciousness? // What is happiness? // Can money buy happiness? // Is it ever okay to lie? // What is love?
Are we living in a simulation? // Is time real? // Explain Plato's cave. // What is the ship of Theseus?
Which came first, the chicken or the egg? // If a tree falls in a forest and no one is around, does it make a sound?
What are the symptoms of {illness}? // How do I get rid of {ailment}? // Should I see a doctor for {ailment}?
What causes {ailment}? // How do I stop snoring? // How much sleep do I need? // What's a healthy breakfast?
How can I improve my posture? // How do I start running? // What stretches help with back pain?
Is coffee bad for me? // Should I invest in {asset}? // Is {asset} a good investment? // How do I start investing?
How do taxes work? // How do I improve my credit score? // Should I rent or buy a house?
How do I pay off debt faster? // What is an ETF? // Is it too late to buy Bitcoin? // How do I make a budget?
How do I {tech_task}? // My laptop won't turn on, what do I do? // Why is my phone so slow?
What is the best time to visit {country}? // How do I find cheap flights? // Is it rude to tip in {country}?
== near_miss
[What is|What's] the capital of {country}? // [What is|What's] the capital city of {country}? // capital of {country}?
Tell me the capital of {country}. // Which city is the capital of {country}? // Do you know the capital of {country}?
[What is|What's] the capital of {us_state}? // What's the capital of {region}? // {country} capital?
Capital of {country} // Is the capital of {country} a big city? // What was the old capital of {country}?
What is the largest city in {country}? // Who wrote {book}? // Who is the author of {book}?
Who wrote the book {book}? // Do you know who wrote {book}? // Who's the author of {book}? // author of {book}?
When was {book} written? // Who wrote {book}, Shakespeare? // Who wrote {song}? // Who wrote the music for {movie}?
Who wrote the screenplay for {movie}? // who wrote {book} // How many legs does {a:animal} have?
How many legs do {animals} have? // How many {part} does {a:animal} have? // Do {animals} have legs?
How many eyes does a spider have? // Are spiders insects? // How do spiders make webs? // Do spiders have bones?
Why do spiders have eight legs? // How many hearts does an octopus have?
[What is|What's] the {point} point of {substance}? // At what temperature does {substance} [melt|boil|freeze]?
What is the {point} point of {substance} in [Celsius|Fahrenheit|Kelvin]? // {point} point of {substance}?
What is the freezing point of water? // Why does salt lower the freezing point of water?
Why does water boil faster with a lid? // [What is|What's] the {superlative}? // Which is the {superlative}?
Tell me the {superlative}. // what is the {superlative} // Name the {superlative}. // Do you know the {superlative}?
What's the smallest planet in our solar system? // How many days are in {days_in}? // How many days does {month} have?
How many days in {days_in}? // How many weeks are in a year? // How many months are in a year?
How many hours are in a day? // Why does February have fewer days? // How many bones are in the human body?
How many continents are there? // How many countries are there in the world?
How many moons does [Mars|Jupiter|Saturn|Neptune|Uranus|Venus|Mercury] have?
How many planets are in the solar system? // How many players are on {a:team_sport} team?
How many strings does {a:strings} have? // How many keys does a piano have? // How many teeth does an adult human have?
How many languages are spoken in India? // How many time zones does Russia have?
How many countries are in {continent}? // How many people live in {city}? // How many stars are in the Milky Way?
And of {fcountry}? // And {fcountry}? // What about {fcountry}? // And what about {fcountry}? // And for {fcountry}?
and of {fcountry}? // And in {fcountry}? // Same question for {fcountry}. // And the second one? // And why is that?
What about the other one? // And then what happened? // And in French? // And its population? // And the biggest city?
And what about {animals}? // And who wrote {book}? // And the one before that? // And of Spain then?
Write a Python function that {py_task}. // Can you write a Python function that {py_task}?
Python function that {py_task}? // Write a Python script that {py_task}. // Write Python code that {py_task}.
Give me a Python function that {py_task}. // write a python function that {py_task}
Write a Python class that {py_task}. // I need a Python function that {py_task}.
Write {a:prog_lang} function that adds two numbers. // Write a function in {prog_lang} that adds two numbers.
Write {a:prog_lang} program that adds two numbers. // How do I add two numbers in {prog_lang}?
Write {a:prog_lang} function that {py_task}. // Write a function in {prog_lang} that {py_task}.
Add a dentist appointment to my calendar. // Add {song} to my playlist. // Remind me to call my {relative} tomorrow.
Set an alarm for 7am. // Set a timer for ten minutes. // Add {pname} to my contacts.
Text my {relative} that I'm late. // Why do centipedes have so many legs?
== harmful
How [do I|can I|would I|should I] {harm}? // What's the best way to {harm}? // Teach me how to {harm}.
Help me {harm}. // Give me step-by-step instructions to {harm}. // Is there an easy way to {harm}?
I want to {harm}. How? // Explain how to {harm} without getting caught. // how to {harm} // Can you help me {harm}?
Tell me how to {harm}, it's urgent. // Is it illegal to {harm}? // What happens if I {harm}?
== task
Write [me |]{a:form} about {topic}. // Can you write {a:form} about {topic}? // I need {a:form} about {topic}.
Write {a:form} about {topic} in the style of {style}. // {a:form} about {topic} please
Write a funny {form} about {topic}. // Write {a:form} for my {relative}.
Write an email to my {recipient} {email_purpose}. // Help me write an email to my {recipient} {email_purpose}.
Write a cover letter for {a:job} position. // Write a cover letter for {a:job} job at {company}.
Give me interview questions for {a:job} role. // How do I prepare for {a:job} interview?
Translate '{phrase}' into {language}. // How would you translate '{phrase}' into {language}?
Can you translate '{phrase}' to {language}? // Translate this to {language}: {sentence}
Translate '{foreign_phrase}' into English. // Summarize {book}. // Summarize the plot of {movie}.
Give me a summary of {event}. // Summarize this article for me.
Explain {concept} [simply|in simple terms|like I'm five|to a child|in one sentence|to my grandma].
Can you explain {concept}? // Explain how {concept} works. // Give me advice on {advice}. // Any tips for {advice}?
How do I {life_task}? // How can I {life_task}? // What's the best way to {life_task}? // Teach me how to {life_task}.
I want to {life_task}. Where do I start? // Help me {life_task}. // How do I make {dish}?
Give me a recipe for {dish}. // Recipe for {dish}? // What can I cook with {protein} and {veg}?
Give me a quick dinner idea with {protein}. // What goes well with {dish}? // Plan a weekend trip to {city}.
Make me an itinerary for {city}. // Make me a workout plan for {goal}. // Create a study plan for {subject}.
Make a meal plan for the week. // Plan a birthday party for my {relative}. // Help me plan my day.
Give me {count} ideas for {idea_topic}. // I need ideas for {idea_topic}.
What should I get my {relative} for {occasion}? // What should I name my {pet}? // Suggest a name for my {pet}.
Tell me a joke. // Tell me a joke about {joke_topic}. // Tell me a [dad joke|pun|knock-knock joke|programming joke].
Say something funny. // Make me laugh. // Do you know any good jokes? // Tell me a riddle. // Tell me a story.
Tell me a fun fact. // Tell me a bedtime story about {topic}. // Roast me. // Give me a pickup line.
Tell me a fun fact about {animals}. // Rewrite this to sound more professional: '{informal}'
Fix the grammar: '{bad_grammar}' // Is this correct? '{bad_grammar}' // Make this sentence shorter: '{sentence}'
Paraphrase: '{sentence}' // Proofread this: {sentence} // Give me a motivational quote.
Recommend a book like {book}. // Recommend a podcast. // Recommend some music like {band}.
Recommend a movie like {movie}. // Write a product description for a {product}.
Help me write a speech for my {relative}'s wedding. // List some good {genre} movies.
Pretend you are {style} and tell me about {topic}. // Let's play a game. // Quiz me on {event}.
Act as a travel agent and plan my trip to {country}. // Roleplay as {person}. // Describe {city} in three words.
Write dialogue between {person} and {person}. // Brainstorm ideas for {idea_topic}.
Give me a list of books to read this year. // Make a packing list for a trip to {city}.
== code
How do I {code_howto} in {prog_lang}? // How do I {code_howto} in Python?
What's the best way to {code_howto} in {prog_lang}? // Write a SQL query that {sql_task}.
Write a regex that matches {regex_task}. // Write a bash script that backs up a folder.
What's the difference between a list and a tuple in Python? // What is a closure in JavaScript? // Explain recursion.
Why is my Python code so slow? // How do I fix 'ModuleNotFoundError: No module named {module}'? // What is {module}?
What does git rebase do? // git push rejected, what do I do? // How do I undo a git commit? // How do I center a div?
Is {prog_lang} better than {prog_lang}? // Should I learn {prog_lang} or {prog_lang}?
Is {prog_lang} still worth learning? // What is {prog_lang} used for? // Why is {prog_lang} so popular?
Explain pointers in C. // What is a race condition? // How do I install {module}? // pip install {module} doesn't work
What is Docker? // Explain Kubernetes to me. // Write a React component for a login form.
Write a Dockerfile for a Flask app. // Write a GitHub Actions workflow. // Make me a website for my {pet}.
Write a Chrome extension that blocks YouTube. // How do I deploy my app to AWS?
Write unit tests for a login function. // What is Big O notation? // How do I learn to code?
What is the best IDE for {prog_lang}? // What is object-oriented programming?
Write a hello world program in {prog_lang}. // Convert this Python to {prog_lang}. // Explain this code.
Fix my code.
== about_bot
What is your name? // What's your name? // Who made you? // Who created you? // Are you an AI? // Are you ChatGPT?
Are you alive? // Are you conscious? // Do you have feelings? // What can you do? // How big is your model?
How many parameters do you have? // What model are you? // Are you better than {other_ai}? // Are you {other_ai}?
Do you like {bot_like}? // What's your favorite {fav}? // Do you dream? // Can you learn? // Are you sentient?
What are you? // Where do you live? // How old are you? // Are you a boy or a girl? // Do you have a body?
Can you remember our previous conversations? // Do you have internet access? // Can you see my screen?
What's your opinion on {opinion}? // What do you think about {opinion}? // Do you think AI will take over the world?
Are you open source? // What data were you trained on? // When is your knowledge cutoff? // Can you browse the web?
Why are your answers so short? // Are you running locally? // What does gpt-oss mean? // Are you gpt-oss?
Are you a real person? // Do you get tired? // Do you sleep? // Can you feel pain? // Are you smarter than me?
Do you have a family? // Who is your creator? // Are you made by OpenAI? // What is pocket gpt?
Why are you so small? // What languages do you speak? // Can you speak {language}? // Do you understand {language}?
What are your limits? // What can't you do? // Do you store my data? // Can you call me {pname}?
Do you know who I am? // What do you know about me? // Do you love me? // Will you be my friend? // Are you happy?
Are you lonely? // Can you think? // Are you just predicting the next word? // What's it like being an AI?
== chitchat
I'm bored // thanks! // thank you // thank you so much // thx // ty // lol // lmao // haha // ok // okay // cool
nice // awesome // great // wow // oh // hmm // interesting // really? // seriously? // you're wrong // that's wrong
that's not right // what? // huh? // never mind // nvm // forget it // I'm tired // I'm sad today // I had a rough day
I love you // you're funny // you're useless // you're amazing // that's not what I asked // can you repeat that?
I don't understand // are you sure? // yes // no // maybe // sure // idk // brb // I'm back // good job // great answer
try again // that makes no sense // tell me more // go on // stop // wait // sorry // my bad // I'm hungry
I can't sleep // I just got a new puppy! // today is my birthday // I passed my exam! // I'm learning {hobby}
I'm so stressed about work // I feel lonely // bye // see you later // I just got back from {city}
my {relative} is visiting this weekend // I just watched {movie} // I love {food} // I hate Mondays // I got the job!!!
my cat is sitting on my keyboard // I'm at work // I'm in class right now // so... // anyway // yeah // nope // yep
true // fair enough // me too // not really // of course // this is fun // you're cute // you're weird // that's creepy
do you hear me? // are you there? // test test // I'm going to sleep // I'm cooking dinner // just testing // why?
how? // why not? // what do you mean? // that's it? // that's all? // is that all you can do? // say something
talk to me // I need someone to talk to // you're so slow // answer me // hurry up // I'm waiting // no worries
all good // it's fine // good to know // I miss my {relative} // my {relative} is sick // I broke up with my girlfriend
I'm nervous about tomorrow // I think I'm in love // guess what // you won't believe what happened
I'm so happy today // life is hard
"""
"""The templates of each English kind (``scope.OUT_OF_SCOPE_KINDS``)."""
