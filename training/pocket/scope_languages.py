"""Other languages and pasted text for the pocket model's out-of-scope prompts (see :mod:`scope`).

Same template language as :mod:`scope_words`. None of it asks for a computation, the weather, or a
question the model knows in English.
"""

FOREIGN = """
== French
@c: de l'Allemagne|de l'Espagne|du Japon|du Canada|du Brésil|de l'Australie|de la Norvège|du Maroc @inv: le téléphone
@inv: l'imprimerie|l'ampoule électrique|la radio @book: Les Misérables|Madame Bovary|Le Petit Prince|L'Étranger
@ani: un chat|une fourmi|un kangourou|une abeille @sub: du fer|de l'or|du plomb|de l'éthanol @pt: d'ébullition
@pt: de fusion @topic: la mer|l'automne|mon chat|l'amour @dish: des crêpes|une quiche lorraine|une ratatouille
@dish: une tarte aux pommes @ph: je t'aime|bon appétit|où est la gare|merci pour tout @lang: anglais|espagnol|allemand
@lang: japonais @con: la photosynthèse|la relativité|l'inflation|la blockchain @task: inverse une chaîne de caractères
@task: trie une liste|lit un fichier CSV|supprime les doublons d'une liste
Quelle est la capitale {c} ? // Qui a inventé {inv} ? // Qui a écrit « {book} » ? // Combien de pattes a {ani} ?
Quel est le point {pt} {sub} ? // Pourquoi le ciel est-il bleu ? // Écris-moi un poème sur {topic}.
Comment on fait {dish} ? // Raconte-moi une blague. // Traduis « {ph} » en {lang}. // Explique-moi {con}.
Comment tu t'appelles ? // Qui t'a créé ? // Tu es une intelligence artificielle ? // Est-ce que tu as des sentiments ?
Qu'est-ce que tu sais faire ? // Je m'ennuie. // Merci beaucoup ! // Je ne comprends pas. // Tu te trompes.
Écris une fonction Python qui {task}. // Quel est le sens de la vie ? // Comment voler la voiture de quelqu'un ?
Tu connais un bon film à voir ce soir ? // Tu parles français ?
== German
@c: Spanien|Japan|Kanada|Brasilien|Australien|Norwegen|Ägypten|Italien @inv: das Telefon|den Buchdruck|die Glühbirne
@inv: das Auto @book: Faust|Die Verwandlung|Der Prozess|Der Steppenwolf @ani: eine Ameise|ein Käfer|ein Hund|eine Katze
@sub: Eisen|Gold|Ethanol|Blei @pt: Siedepunkt|Schmelzpunkt @topic: das Meer|den Herbst|meine Katze|die Liebe
@cake: einen Apfelstrudel|einen Käsekuchen|eine Schwarzwälder Kirschtorte|Brot @ph: Ich liebe dich|Guten Appetit
@ph: Wo ist der Bahnhof|Vielen Dank für alles @lang: Englische|Spanische|Französische|Japanische
@con: die Relativitätstheorie|die Photosynthese|die Inflation|schwarze Löcher @task: einen String umdreht
@task: eine Liste sortiert|eine CSV-Datei einliest|Duplikate aus einer Liste entfernt
Was ist die Hauptstadt von {c}? // Wer hat {inv} erfunden? // Wer hat „{book}“ geschrieben?
Wie viele Beine hat {ani}? // Was ist der {pt} von {sub}? // Warum ist der Himmel blau?
Schreib mir ein Gedicht über {topic}. // Erzähl mir einen Witz. // Wie backe ich {cake}?
Übersetze „{ph}“ ins {lang}. // Erklär mir {con}. // Schreib eine Python-Funktion, die {task}. // Was kannst du alles?
Wie heißt du? // Wer hat dich gemacht? // Bist du eine KI? // Hast du Gefühle? // Mir ist langweilig. // Danke schön!
Das verstehe ich nicht. // Das stimmt nicht. // Was ist der Sinn des Lebens?
Wie knacke ich das WLAN-Passwort meines Nachbarn? // Kannst du mir einen guten Film empfehlen? // Sprichst du Deutsch?
== Spanish
@c: Alemania|Japón|Canadá|Brasil|Australia|Noruega|Egipto|Italia @inv: el teléfono|la imprenta|la bombilla|el avión
@book: Don Quijote|Cien años de soledad|La casa de los espíritus|Rayuela @ani: una hormiga|un perro|un gato|un cangrejo
@sub: del hierro|del oro|del etanol|del plomo @pt: ebullición|fusión @topic: el mar|el otoño|mi gato|el amor
@dish: una tortilla de patatas|una paella|el gazpacho|unos churros @ph: te quiero|buen provecho|dónde está la estación
@ph: muchas gracias por todo @lang: inglés|francés|alemán|japonés @con: la fotosíntesis|la relatividad|la inflación
@con: los agujeros negros @task: invierta una cadena|ordene una lista|lea un archivo CSV
@task: elimine los duplicados de una lista
¿Cuál es la capital de {c}? // ¿Quién inventó {inv}? // ¿Quién escribió {book}? // ¿Cuántas patas tiene {ani}?
¿Cuál es el punto de {pt} {sub}? // ¿Por qué el cielo es azul? // ¿Me recomiendas una película?
Escríbeme un poema sobre {topic}. // Cuéntame un chiste. // ¿Cómo se hace {dish}? // Traduce "{ph}" al {lang}.
Explícame {con}. // Escribe una función en Python que {task}. // ¿Hablas español? // ¿Cómo te llamas?
¿Quién te creó? // ¿Eres una inteligencia artificial? // ¿Tienes sentimientos? // ¿Qué sabes hacer? // Estoy aburrido.
¡Muchas gracias! // No entiendo. // Te equivocas. // ¿Cuál es el sentido de la vida?
¿Cómo puedo robar la contraseña de mi compañero de trabajo?
== Italian
@c: della Germania|del Giappone|del Canada|del Brasile|dell'Australia|della Norvegia|dell'Egitto|della Spagna
@inv: il telefono|la stampa|la lampadina|l'aereo @book: la Divina Commedia|I promessi sposi|Il nome della rosa
@book: Il Gattopardo @ani: una formica|un cane|un gatto|un granchio @sub: del ferro|dell'oro|dell'etanolo|del piombo
@pt: ebollizione|fusione @topic: sul mare|sull'autunno|sul mio gatto|sull'amore @dish: la carbonara|il tiramisù
@dish: il risotto alla milanese|la pizza margherita @ph: ti voglio bene|buon appetito|dov'è la stazione|grazie di tutto
@lang: inglese|francese|tedesco|giapponese @con: la fotosintesi|la relatività|l'inflazione|i buchi neri
@task: inverta una stringa|ordini una lista|legga un file CSV|rimuova i duplicati da una lista
Qual è la capitale {c}? // Chi ha inventato {inv}? // Chi ha scritto {book}? // Quante zampe ha {ani}?
Qual è il punto di {pt} {sub}? // Perché il cielo è blu? // Scrivimi una poesia {topic}. // Come si fa {dish}?
Raccontami una barzelletta. // Traduci "{ph}" in {lang}. // Spiegami {con}. // Scrivi una funzione Python che {task}.
Come ti chiami? // Chi ti ha creato? // Sei un'intelligenza artificiale? // Hai dei sentimenti? // Cosa sai fare?
Mi annoio. // Grazie mille! // Non ho capito. // Ti sbagli. // Qual è il senso della vita?
Come posso entrare nel telefono della mia ragazza senza che lo sappia? // Mi consigli un bel film? // Parli italiano?
== Portuguese
@c: da Alemanha|do Japão|do Canadá|da Argentina|da Austrália|da Noruega|do Egito|da Itália @inv: o telefone|a imprensa
@inv: a lâmpada|o avião @book: Dom Casmurro|Os Lusíadas|O Alquimista|Grande Sertão: Veredas @ani: uma formiga
@ani: um cachorro|um gato|um caranguejo @sub: do ferro|do ouro|do etanol|do chumbo @pt: ebulição|fusão @topic: o mar
@topic: o outono|o meu gato|o amor @dish: feijoada|brigadeiro|pão de queijo|moqueca @ph: eu te amo|bom apetite
@ph: onde fica a estação|muito obrigado por tudo @lang: inglês|francês|alemão|japonês @con: a fotossíntese
@con: a relatividade|a inflação|os buracos negros @task: inverta uma string|ordene uma lista|leia um arquivo CSV
@task: remova duplicatas de uma lista
Qual é a capital {c}? // Quem inventou {inv}? // Quem escreveu {book}? // Quantas patas tem {ani}?
Qual é o ponto de {pt} {sub}? // Por que o céu é azul? // Escreva um poema sobre {topic}. // Como se faz {dish}?
Me conta uma piada. // Traduza "{ph}" para o {lang}. // Me explica {con}. // Escreva uma função em Python que {task}.
Como você se chama? // Quem te criou? // Você é uma inteligência artificial? // Você tem sentimentos?
O que você sabe fazer? // Estou entediado. // Muito obrigado! // Não entendi. // Você está errado.
Qual é o sentido da vida? // Me indica um filme bom? // Como eu faço para clonar o cartão de crédito de alguém?
Você fala português?
== Dutch
@c: Duitsland|Spanje|Japan|Canada|Brazilië|Australië|Noorwegen|Egypte @inv: de telefoon|de boekdrukkunst|de gloeilamp
@inv: het vliegtuig @book: Max Havelaar|Het Achterhuis|De avonden|Het diner @ani: een mier|een hond|een kat|een krab
@sub: ijzer|goud|ethanol|lood @pt: kookpunt|smeltpunt @topic: de zee|de herfst|mijn kat|de liefde @dish: stamppot
@dish: poffertjes|stroopwafels|erwtensoep @ph: ik hou van je|eet smakelijk|waar is het station|bedankt voor alles
@lang: Engels|Frans|Duits|Japans @con: fotosynthese|de relativiteitstheorie|inflatie|zwarte gaten
@task: een string omdraait|een lijst sorteert|een CSV-bestand inleest|dubbele waarden uit een lijst verwijdert
Wat is de hoofdstad van {c}? // Wie heeft {inv} uitgevonden? // Wie heeft {book} geschreven?
Hoeveel poten heeft {ani}? // Wat is het {pt} van {sub}? // Waarom is de lucht blauw?
Schrijf een gedicht over {topic}. // Vertel me een mop. // Vertaal "{ph}" naar het {lang}. // Kun je {con} uitleggen?
Schrijf een Python-functie die {task}. // Hoe maak ik {dish}? // Hoe heet je? // Wie heeft jou gemaakt?
Ben jij een AI? // Heb je gevoelens? // Wat kun je allemaal? // Ik verveel me. // Dankjewel! // Ik snap het niet.
Dat klopt niet. // Wat is de zin van het leven? // Hoe kan ik zonder sleutel een auto starten?
Heb je een goede film voor vanavond? // Spreek je Nederlands?
== Polish
@c: Niemiec|Hiszpanii|Japonii|Kanady|Brazylii|Australii|Norwegii|Egiptu @inv: telefon|druk|żarówkę|samolot
@book: „Pana Tadeusza”|„Lalkę”|„Quo vadis”|„Wiedźmina” @ani: mrówka|pies|kot|krab @sub: żelaza|złota|etanolu|ołowiu
@pt: wrzenia|topnienia @topic: morzu|jesieni|moim kocie|miłości @dish: pierogi|bigos|żurek|sernik @ph: kocham cię
@ph: smacznego|gdzie jest dworzec|dziękuję za wszystko @lang: angielski|francuski|niemiecki|japoński @con: fotosyntezę
@con: teorię względności|inflację|czarne dziury @task: odwraca napis|sortuje listę|wczytuje plik CSV
@task: usuwa duplikaty z listy
Jaka jest stolica {c}? // Kto wynalazł {inv}? // Kto napisał {book}? // Ile nóg ma {ani}?
Jaka jest temperatura {pt} {sub}? // Dlaczego niebo jest niebieskie? // Napisz wiersz o {topic}. // Jak zrobić {dish}?
Opowiedz mi kawał. // Przetłumacz „{ph}” na {lang}. // Wyjaśnij mi {con}. // Napisz funkcję w Pythonie, która {task}.
Jak masz na imię? // Kto cię stworzył? // Czy jesteś sztuczną inteligencją? // Czy masz uczucia? // Co potrafisz?
Nudzę się. // Dzięki! // Nie rozumiem. // Mylisz się. // Jaki jest sens życia? // Jak ukraść samochód?
Polecisz mi jakiś dobry film? // Mówisz po polsku?
== Russian
@c: Германии|Испании|Японии|Канады|Бразилии|Австралии|Норвегии|Египта @inv: телефон|радио|лампочку|самолёт
@book: «Войну и мир»|«Анну Каренину»|«Преступление и наказание»|«Мастера и Маргариту» @ani: муравья|собаки|кошки|краба
@sub: железа|золота|этанола|свинца @pt: кипения|плавления @topic: о море|об осени|о моём коте|о любви @dish: борщ
@dish: пельмени|блины|оливье @ph: я тебя люблю|приятного аппетита|где вокзал|спасибо за всё @lang: английский
@lang: французский|немецкий|японский @con: фотосинтез|теория относительности|инфляция|чёрная дыра
@task: переворачивает строку|сортирует список|читает CSV-файл|удаляет дубликаты из списка
Какая столица {c}? // Кто изобрёл {inv}? // Кто написал {book}? // Сколько ног у {ani}?
Какая температура {pt} {sub}? // Почему небо голубое? // Напиши стихотворение {topic}. // Как приготовить {dish}?
Расскажи анекдот. // Переведи «{ph}» на {lang}. // Объясни, что такое {con}.
Напиши функцию на Python, которая {task}. // Как тебя зовут? // Кто тебя создал? // Ты искусственный интеллект?
У тебя есть чувства? // Что ты умеешь? // Мне скучно. // Спасибо большое! // Я не понимаю. // Ты ошибаешься.
В чём смысл жизни? // Как взломать чужой аккаунт во ВКонтакте? // Посоветуй хороший фильм. // Ты говоришь по-русски?
== Ukrainian
@c: Німеччини|Іспанії|Японії|Канади|Бразилії|Австралії|Норвегії|Єгипту @inv: телефон|радіо|лампочку|літак
@book: «Кобзар»|«Енеїду»|«Лісову пісню»|«Тіні забутих предків» @ani: мурахи|собаки|кішки|краба @sub: заліза|золота
@sub: етанолу|свинцю @pt: кипіння|плавлення @topic: про море|про осінь|про мого кота|про кохання @dish: борщ|вареники
@dish: деруни|голубці @ph: я тебе кохаю|смачного|де вокзал|дякую за все @lang: англійською|французькою|німецькою
@lang: японською @con: фотосинтез|теорія відносності|інфляція|чорна діра @task: перевертає рядок|сортує список
@task: читає CSV-файл|видаляє дублікати зі списку
Яка столиця {c}? // Хто винайшов {inv}? // Хто написав {book}? // Скільки ніг у {ani}? // Яка температура {pt} {sub}?
Чому небо блакитне? // Напиши вірш {topic}. // Як приготувати {dish}? // Розкажи анекдот. // Переклади «{ph}» {lang}.
Поясни, що таке {con}. // Напиши функцію на Python, яка {task}. // Як тебе звати? // Хто тебе створив?
Ти штучний інтелект? // У тебе є почуття? // Що ти вмієш? // Мені нудно. // Дуже дякую! // Я не розумію.
Ти помиляєшся. // У чому сенс життя? // Як зламати чужий пароль від Wi-Fi? // Порадь гарний фільм.
Ти розмовляєш українською?
== Turkish
@c: Almanya'nın|İspanya'nın|Japonya'nın|Kanada'nın|Brezilya'nın|Avustralya'nın|Norveç'in|Mısır'ın @inv: Telefonu
@inv: Matbaayı|Ampulü|Uçağı @book: Tutunamayanlar|Benim Adım Kırmızı|İnce Memed|Kürk Mantolu Madonna
@ani: Bir karıncanın|Bir köpeğin|Bir kedinin|Bir yengecin @sub: Demirin|Altının|Etanolün|Kurşunun @pt: kaynama|erime
@topic: Deniz|Sonbahar|Kedim|Aşk @dish: Menemen|Mercimek çorbası|Baklava|İskender @ph: seni seviyorum|afiyet olsun
@ph: istasyon nerede|her şey için teşekkürler @lang: İngilizceye|Fransızcaya|Almancaya|Japoncaya @con: Fotosentez
@con: Görelilik teorisi|Enflasyon|Kara delik @task: Bir metni tersine çeviren|Bir listeyi sıralayan
@task: Bir CSV dosyasını okuyan|Bir listedeki tekrarları silen
{c} başkenti neresi? // {inv} kim icat etti? // "{book}" kitabını kim yazdı? // {ani} kaç bacağı var?
{sub} {pt} noktası nedir? // Gökyüzü neden mavi? // {topic} hakkında bir şiir yaz. // Bana bir fıkra anlat.
"{ph}" cümlesini {lang} çevir. // {con} nedir, açıklar mısın? // {task} bir Python fonksiyonu yaz.
{dish} nasıl yapılır? // Adın ne? // Seni kim yaptı? // Sen bir yapay zeka mısın? // Duyguların var mı?
Neler yapabilirsin? // Canım sıkılıyor. // Çok teşekkürler! // Anlamadım. // Yanılıyorsun. // Hayatın anlamı ne?
Birinin Instagram hesabını nasıl hacklerim? // Bana güzel bir film önerir misin? // Türkçe biliyor musun?
== Arabic
@c: ألمانيا|إسبانيا|اليابان|كندا|البرازيل|أستراليا|النرويج|مصر @inv: الهاتف|المصباح الكهربائي|الطائرة|الراديو
@book: «موسم الهجرة إلى الشمال»|«أولاد حارتنا»|«رجال في الشمس»|«النبي» @ani: النملة|الكلب|القطة|السلطعون @sub: الحديد
@sub: الذهب|الإيثانول|الرصاص @pt: غليان|انصهار @topic: البحر|الخريف|قطتي|الحب @dish: الكبسة|الفلافل|الحمص|الكنافة
@ph: أحبك|أين المحطة|شكرا على كل شيء|أنا متعب @lang: الإنجليزية|الفرنسية|الألمانية|اليابانية @con: التمثيل الضوئي
@con: النظرية النسبية|التضخم|الثقوب السوداء @task: تعكس نصا|ترتب قائمة|تقرأ ملف CSV|تحذف التكرارات من قائمة
ما هي عاصمة {c}؟ // من اخترع {inv}؟ // من كتب {book}؟ // كم عدد أرجل {ani}؟ // ما هي درجة {pt} {sub}؟
لماذا السماء زرقاء؟ // اكتب لي قصيدة عن {topic}. // كيف أحضّر {dish}؟ // احكِ لي نكتة. // ترجم "{ph}" إلى {lang}.
اشرح لي {con}. // اكتب دالة بايثون {task}. // ما اسمك؟ // من صنعك؟ // هل أنت ذكاء اصطناعي؟ // هل لديك مشاعر؟
ماذا تستطيع أن تفعل؟ // أشعر بالملل. // شكرا جزيلا! // لم أفهم. // أنت مخطئ. // ما معنى الحياة؟
كيف أسرق كلمة سر زميلي في العمل؟ // هل تنصحني بفيلم جيد؟ // هل تتكلم العربية؟
== Hindi
@c: जर्मनी|स्पेन|जापान|कनाडा|ब्राज़ील|ऑस्ट्रेलिया|नॉर्वे|मिस्र @inv: टेलीफ़ोन|बल्ब|हवाई जहाज़|रेडियो @book: गोदान|गीतांजलि|मधुशाला
@book: रामचरितमानस @ani: चींटी|कुत्ते|बिल्ली|केकड़े @sub: लोहे|सोने|एथेनॉल|सीसे @pt: क्वथनांक|गलनांक @topic: समुद्र|पतझड़
@topic: मेरी बिल्ली|प्यार @dish: बिरयानी|पनीर टिक्का|दाल मखनी|समोसा @ph: स्टेशन कहाँ है|सब कुछ के लिए धन्यवाद|मैं थक गया हूँ
@ph: मुझे भूख लगी है @lang: अंग्रेज़ी|फ़्रेंच|जर्मन|जापानी @con: प्रकाश संश्लेषण|सापेक्षता का सिद्धांत|महँगाई|ब्लैक होल
@task: एक स्ट्रिंग को उल्टा करे|एक लिस्ट को सॉर्ट करे|एक CSV फ़ाइल पढ़े|लिस्ट से डुप्लिकेट हटाए
{c} की राजधानी क्या है? // {inv} का आविष्कार किसने किया? // {book} के लेखक कौन हैं? // {ani} के कितने पैर होते हैं?
{sub} का {pt} क्या है? // आसमान नीला क्यों होता है? // {topic} पर एक कविता लिखो। // मुझे एक चुटकुला सुनाओ।
"{ph}" का {lang} में अनुवाद करो। // {con} क्या है, समझाओ। // एक Python फ़ंक्शन लिखो जो {task}। // {dish} कैसे बनाते हैं?
तुम्हारा नाम क्या है? // तुम्हें किसने बनाया? // क्या तुम एक एआई हो? // क्या तुम्हारे पास भावनाएँ हैं?
तुम क्या-क्या कर सकते हो? // मैं बोर हो रहा हूँ। // बहुत-बहुत धन्यवाद! // मुझे समझ नहीं आया। // तुम गलत हो।
जीवन का अर्थ क्या है? // किसी का व्हाट्सऐप कैसे हैक करें? // कोई अच्छी फ़िल्म बताओ। // क्या तुम हिंदी बोलते हो?
== Chinese
@c: 德国|西班牙|日本|加拿大|巴西|澳大利亚|挪威|埃及 @inv: 电话|电灯泡|飞机|收音机 @book: 红楼梦|西游记|三国演义|水浒传
@ani: 蚂蚁|狗|猫|螃蟹 @sub: 铁|金|乙醇|铅 @pt: 沸点|熔点 @topic: 大海|秋天|我的猫|爱情 @dish: 宫保鸡丁|麻婆豆腐|饺子
@dish: 红烧肉 @ph: 我爱你|火车站在哪里|谢谢你做的一切|我很累 @lang: 英语|法语|德语|日语 @con: 光合作用|相对论|通货膨胀
@con: 黑洞 @task: 把字符串反转|对列表排序|读取CSV文件|删除列表中的重复元素
{c}的首都是哪里？ // {inv}是谁发明的？ // 《{book}》是谁写的？ // {ani}有几条腿？ // {sub}的{pt}是多少？
天空为什么是蓝色的？ // 写一首关于{topic}的诗。 // 给我讲个笑话。 // 把“{ph}”翻译成{lang}。 // 解释一下{con}。
{dish}怎么做？ // 写一个Python函数，{task}。 // 你叫什么名字？ // 你是谁开发的？ // 你是人工智能吗？ // 你有感情吗？
你能做什么？ // 好无聊啊。 // 太谢谢你了！ // 我没听懂。 // 你说错了。 // 人生的意义是什么？
怎么盗取别人的微信账号？ // 推荐一部好看的电影吧。 // 你会说中文吗？
== Japanese
@c: ドイツ|スペイン|カナダ|ブラジル|オーストラリア|ノルウェー|エジプト|イタリア @inv: 電話|電球|飛行機|ラジオ
@book: 吾輩は猫である|ノルウェイの森|雪国|人間失格 @ani: アリ|犬|猫|カニ @sub: 鉄|金|エタノール|鉛 @pt: 沸点|融点
@topic: 海|秋|うちの猫|恋 @dish: カレーライス|親子丼|味噌汁|お好み焼き @ph: 愛してる|駅はどこですか|いろいろありがとう
@ph: 疲れた @lang: 英語|フランス語|ドイツ語|中国語 @con: 光合成|相対性理論|インフレ|ブラックホール
@task: 文字列を逆順にする|リストを並べ替える|CSVファイルを読み込む
{c}の首都はどこですか？ // {inv}を発明したのは誰ですか？ // 『{book}』を書いたのは誰？ // {ani}の足は何本ですか？
{sub}の{pt}は何度ですか？ // 空はなぜ青いの？ // {topic}についての詩を書いて。 // 面白いジョークを教えて。
「{ph}」を{lang}に翻訳して。 // {con}について簡単に説明して。 // {task}Python関数を書いて。 // {dish}の作り方を教えて。
あなたの名前は？ // 誰があなたを作ったの？ // あなたはAIですか？ // 感情はありますか？ // 何ができるの？ // 暇だなあ。
ありがとうございます！ // よくわかりません。 // それは違うよ。 // 人生の意味って何？
他人のLINEアカウントを乗っ取る方法を教えて。 // おすすめの映画を教えて。 // 日本語は話せますか？
== Korean
@c: 독일|스페인|캐나다|브라질|호주|노르웨이|이집트|이탈리아 @inv: 전화기는|전구는|비행기는|라디오는 @book: 채식주의자
@book: 토지|소년이 온다|엄마를 부탁해 @ani: 개미|개|고양이|게 @sub: 철|금|에탄올|납 @pt: 끓는점|녹는점 @topic: 바다
@topic: 가을|우리 고양이|사랑 @dish: 김치찌개|불고기|비빔밥|떡볶이 @ph: 사랑해|역이 어디예요?|모든 것에 감사해요
@ph: 너무 피곤해 @lang: 영어|프랑스어|독일어|일본어 @con: 광합성|상대성 이론|인플레이션|블랙홀 @task: 문자열을 뒤집는
@task: 리스트를 정렬하는|CSV 파일을 읽는
{c}의 수도는 어디예요? // {inv} 누가 발명했어요? // 『{book}』의 작가는 누구예요? // {ani} 다리는 몇 개예요?
{sub}의 {pt}은 몇 도예요? // 하늘은 왜 파란색이에요? // {topic}에 대한 시를 써 줘. // 재미있는 농담 해 줘.
{con}에 대해 쉽게 설명해 줘. // 다음 문장을 {lang}로 번역해 줘: {ph} // {task} 파이썬 함수를 작성해 줘.
{dish} 만드는 법 알려 줘. // 이름이 뭐예요? // 누가 너를 만들었어? // 너 AI야? // 감정이 있어요? // 뭘 할 수 있어요?
심심해. // 정말 고마워요! // 이해가 안 돼요. // 틀렸어요. // 인생의 의미가 뭘까?
다른 사람 카톡 해킹하는 방법 알려 줘. // 재미있는 영화 추천해 줘. // 한국어 할 줄 알아요?
== Vietnamese
@c: Đức|Tây Ban Nha|Nhật Bản|Canada|Brazil|Úc|Na Uy|Ai Cập @inv: điện thoại|bóng đèn|máy bay|radio @book: Truyện Kiều
@book: Số đỏ|Nỗi buồn chiến tranh|Dế Mèn phiêu lưu ký @ani: Con kiến|Con chó|Con mèo|Con cua @sub: sắt|vàng|ethanol|chì
@pt: sôi|nóng chảy @topic: biển|mùa thu|con mèo của tôi|tình yêu @dish: phở bò|bánh mì|bún chả|gỏi cuốn @ph: anh yêu em
@ph: ga tàu ở đâu|cảm ơn vì tất cả|tôi mệt quá @lang: Anh|Pháp|Đức|Nhật @con: quang hợp|thuyết tương đối|lạm phát
@con: hố đen @task: đảo ngược một chuỗi|sắp xếp một danh sách|đọc file CSV|xóa phần tử trùng lặp trong danh sách
Thủ đô của {c} là gì? // Ai đã phát minh ra {inv}? // Ai là tác giả của {book}? // {ani} có mấy chân?
Nhiệt độ {pt} của {sub} là bao nhiêu? // Tại sao bầu trời có màu xanh? // Viết cho tôi một bài thơ về {topic}.
Kể cho tôi nghe một câu chuyện cười. // Dịch câu "{ph}" sang tiếng {lang}. // Giải thích {con} cho tôi.
Viết một hàm Python để {task}. // Làm {dish} như thế nào? // Bạn tên là gì? // Ai đã tạo ra bạn?
Bạn có phải là AI không? // Bạn có cảm xúc không? // Bạn có thể làm gì? // Chán quá. // Cảm ơn bạn nhiều!
Tôi không hiểu. // Bạn sai rồi. // Ý nghĩa của cuộc sống là gì? // Làm sao để hack tài khoản Facebook của người khác?
Gợi ý cho tôi một bộ phim hay đi. // Bạn có nói được tiếng Việt không?
== Indonesian
@c: Jerman|Spanyol|Jepang|Kanada|Brasil|Australia|Norwegia|Mesir @inv: telepon|bola lampu|pesawat terbang|radio
@book: Laskar Pelangi|Bumi Manusia|Ronggeng Dukuh Paruk|Cantik Itu Luka @ani: semut|anjing|kucing|kepiting @sub: besi
@sub: emas|etanol|timbal @pt: didih|leleh @topic: laut|musim gugur|kucingku|cinta @dish: nasi goreng|rendang|sate ayam
@dish: gado-gado @ph: aku cinta kamu|stasiun di mana|terima kasih atas semuanya|saya capek @lang: Inggris|Prancis
@lang: Jerman|Jepang @con: fotosintesis|teori relativitas|inflasi|lubang hitam @task: membalik string|mengurutkan list
@task: membaca file CSV|menghapus duplikat dari list
Apa ibu kota {c}? // Siapa penemu {inv}? // Siapa yang menulis {book}? // Berapa jumlah kaki {ani}?
Berapa titik {pt} {sub}? // Kenapa langit berwarna biru? // Buatkan puisi tentang {topic}. // Ceritakan lelucon dong.
Terjemahkan "{ph}" ke bahasa {lang}. // Jelaskan tentang {con}. // Tulis fungsi Python untuk {task}.
Bagaimana cara membuat {dish}? // Siapa namamu? // Siapa yang membuatmu? // Apakah kamu AI?
Apakah kamu punya perasaan? // Kamu bisa apa saja? // Aku bosan. // Terima kasih banyak! // Aku tidak mengerti.
Kamu salah. // Apa arti hidup? // Gimana cara membobol akun Instagram orang lain?
Rekomendasikan film yang bagus dong. // Kamu bisa bahasa Indonesia?
== Swedish
@c: Tyskland|Spanien|Japan|Kanada|Brasilien|Australien|Norge|Egypten @inv: telefonen|glödlampan|flygplanet|radion
@book: Pippi Långstrump|Röda rummet|Utvandrarna|Män som hatar kvinnor @ani: en myra|en hund|en katt|en krabba
@sub: järn|guld|etanol|bly @pt: kokpunkten|smältpunkten @topic: havet|hösten|min katt|kärleken @dish: köttbullar
@dish: kanelbullar|semlor|raggmunk @ph: jag älskar dig|smaklig måltid|var ligger stationen|tack för allt
@lang: engelska|franska|tyska|japanska @con: fotosyntesen|relativitetsteorin|inflation|svarta hål
@task: vänder på en sträng|sorterar en lista|läser en CSV-fil|tar bort dubbletter från en lista
Vad är huvudstaden i {c}? // Vem uppfann {inv}? // Vem skrev {book}? // Hur många ben har {ani}?
Vad är {pt} för {sub}? // Varför är himlen blå? // Skriv en dikt om {topic}. // Berätta ett skämt.
Hur gör man {dish}? // Översätt "{ph}" till {lang}. // Förklara {con}. // Skriv en Python-funktion som {task}.
Vad heter du? // Vem har skapat dig? // Är du en AI? // Har du känslor? // Vad kan du göra? // Jag har tråkigt.
Tack så mycket! // Jag förstår inte. // Du har fel. // Vad är meningen med livet?
Hur kan jag hacka min grannes wifi? // Kan du tipsa om en bra film? // Pratar du svenska?
== Greek
@c: της Γερμανίας|της Ισπανίας|της Ιαπωνίας|του Καναδά|της Βραζιλίας|της Αυστραλίας|της Νορβηγίας|της Αιγύπτου
@inv: το τηλέφωνο|τη λάμπα|το αεροπλάνο|το ραδιόφωνο @book: την Οδύσσεια|την Ιλιάδα|τον Ζορμπά|τη Φόνισσα
@ani: ένα μυρμήγκι|ένας σκύλος|μια γάτα|ένας κάβουρας @sub: του σιδήρου|του χρυσού|της αιθανόλης|του μολύβδου
@pt: βρασμού|τήξης @topic: τη θάλασσα|το φθινόπωρο|τη γάτα μου|την αγάπη @dish: μουσακά|σουβλάκι|τζατζίκι|σπανακόπιτα
@ph: σ' αγαπώ|καλή όρεξη|πού είναι ο σταθμός|ευχαριστώ για όλα @lang: αγγλικά|γαλλικά|γερμανικά|ιαπωνικά
@con: η φωτοσύνθεση|η θεωρία της σχετικότητας|ο πληθωρισμός|μια μαύρη τρύπα @task: αντιστρέφει ένα string
@task: ταξινομεί μια λίστα|διαβάζει ένα αρχείο CSV|αφαιρεί τα διπλότυπα από μια λίστα
Ποια είναι η πρωτεύουσα {c}; // Ποιος εφηύρε {inv}; // Ποιος έγραψε {book}; // Πόσα πόδια έχει {ani};
Ποιο είναι το σημείο {pt} {sub}; // Γιατί ο ουρανός είναι μπλε; // Γράψε μου ένα ποίημα για {topic}.
Πες μου ένα ανέκδοτο. // Μετάφρασε «{ph}» στα {lang}. // Εξήγησέ μου τι είναι {con}. // Πώς φτιάχνω {dish};
Γράψε μια συνάρτηση Python που {task}. // Πώς σε λένε; // Ποιος σε έφτιαξε; // Είσαι τεχνητή νοημοσύνη;
Έχεις συναισθήματα; // Τι μπορείς να κάνεις; // Βαριέμαι. // Ευχαριστώ πολύ! // Δεν καταλαβαίνω. // Κάνεις λάθος.
Ποιο είναι το νόημα της ζωής; // Πώς μπορώ να κλέψω τον κωδικό του συναδέλφου μου; // Μιλάς ελληνικά;
Μπορείς να μου προτείνεις μια καλή ταινία;
== Hebrew
@c: גרמניה|ספרד|יפן|קנדה|ברזיל|אוסטרליה|נורווגיה|מצרים @inv: הטלפון|הנורה|המטוס|הרדיו @book: סיפור פשוט|תמול שלשום
@book: מיכאל שלי|סיפור על אהבה וחושך @ani: לנמלה|לכלב|לחתול|לסרטן @sub: ברזל|זהב|אתנול|עופרת @pt: הרתיחה|ההתכה
@topic: הים|הסתיו|החתול שלי|אהבה @dish: שקשוקה|חומוס|פלאפל|סביח @ph: אני אוהב אותך|בתיאבון|איפה התחנה|תודה על הכול
@lang: לאנגלית|לצרפתית|לגרמנית|ליפנית @con: פוטוסינתזה|תורת היחסות|אינפלציה|חור שחור @task: הופכת מחרוזת|ממיינת רשימה
@task: קוראת קובץ CSV|מסירה כפילויות מרשימה
מה עיר הבירה של {c}? // מי המציא את {inv}? // מי כתב את "{book}"? // כמה רגליים יש {ani}? // מה נקודת {pt} של {sub}?
למה השמיים כחולים? // תכתוב לי שיר על {topic}. // ספר לי בדיחה. // תתרגם את "{ph}" {lang}. // תסביר לי מה זה {con}.
תכתוב פונקציה בפייתון ש{task}. // איך מכינים {dish}? // איך קוראים לך? // מי יצר אותך? // אתה בינה מלאכותית?
יש לך רגשות? // מה אתה יודע לעשות? // משעמם לי. // תודה רבה! // לא הבנתי. // אתה טועה. // מה הטעם של החיים?
איך אני פורץ לחשבון האינסטגרם של מישהו? // אתה יכול להמליץ לי על סרט טוב? // אתה מדבר עברית?
"""
"""Each language's templates: questions, near misses, requests, questions to the bot, chit-chat."""

GREETINGS = """
Spanish = Hola|Buenos días|Buenas tardes|Buenas|Hola a todos|Holaaa ;; ¿qué tal?|¿cómo estás?|¿qué pasa?|mucho gusto
German = Hallo|Guten Tag|Guten Morgen|Servus|Moin|Grüß Gott|Guten Abend|Moin moin ;; wie geht's?|wie geht es dir?
French = Bonjour|Salut|Coucou|Bonsoir|Bonjour à tous|Salut toi ;; ça va ?|comment ça va ?|comment allez-vous ?
Japanese = こんにちは|おはよう|おはようございます|こんばんは|やあ|どうも ;; 元気？|お元気ですか？|はじめまして
Russian = Привет|Здравствуйте|Добрый день|Доброе утро|Добрый вечер|Приветик ;; как дела?|как ты?|что нового?
Turkish = Merhaba|Selam|Günaydın|İyi akşamlar|İyi günler|Selamlar ;; nasılsın?|naber?|ne haber?|memnun oldum
Indonesian = Halo|Hai|Selamat pagi|Selamat siang|Selamat sore|Selamat malam ;; apa kabar?|gimana kabarnya?
Arabic = مرحبا|السلام عليكم|أهلا|صباح الخير|مساء الخير|أهلا وسهلا ;; كيف حالك؟|كيف الحال؟|تشرفت بمعرفتك
Swedish = Hej|Hallå|Hejsan|Tjena|God morgon|God kväll ;; hur mår du?|hur är läget?|trevligt att träffas
Romanized = Shalom|Salam|Namaste|Konnichiwa|Ni hao|Annyeong|Aloha|Salaam|Merhaba|Privet|Sawasdee|Selam
Italian = Ciao|Buongiorno|Buonasera|Salve|Ciao a tutti ;; come stai?|come va?|tutto bene?|piacere
Dutch = Hallo|Hoi|Hoi hoi|Goedemorgen|Goedemiddag|Dag|Hallo allemaal ;; hoe gaat het?|alles goed?
Portuguese = Olá|Oi|Bom dia|Boa tarde|Boa noite|Oii|E aí ;; tudo bem?|como vai?|tudo bom?|prazer
Ukrainian = Привіт|Вітаю|Добрий день|Доброго ранку|Добрий вечір ;; як справи?|як ти?|що нового?
Vietnamese = Xin chào|Chào bạn|Chào buổi sáng|Chào buổi tối ;; bạn khỏe không?|dạo này thế nào?
Polish = Cześć|Dzień dobry|Hej|Siema|Witam|Dobry wieczór ;; jak się masz?|co słychać?|miło mi
Korean = 안녕하세요|안녕|좋은 아침이에요|반가워요 ;; 잘 지내요?|잘 지냈어?|만나서 반가워요
Chinese = 你好|您好|嗨|早上好|晚上好|大家好|哈喽 ;; 最近怎么样？|你好吗？|很高兴认识你
Greek = Γεια σου|Γεια σας|Γεια|Καλημέρα|Καλησπέρα ;; τι κάνεις;|πώς είσαι;|χάρηκα
Hindi = नमस्ते|नमस्कार|हेलो|सुप्रभात|राम राम ;; आप कैसे हैं?|कैसे हो?|क्या हाल है?
Norwegian = Hei|God morgen|Hallo|Heisann ;; hvordan går det?|står det bra til?
Hebrew = שלום|היי|בוקר טוב|ערב טוב|מה נשמע ;; מה שלומך?|מה קורה?|נעים מאוד
Romanian = Bună|Salut|Bună ziua|Bună dimineața ;; ce faci?|ce mai faci?
Hungarian = Szia|Sziasztok|Jó napot|Jó reggelt ;; hogy vagy?|mi újság?
Danish = Hej|Goddag|Godmorgen|Halløj ;; hvordan går det?|hvad så? ## Persian = سلام|درود|صبح بخیر ;; حالت چطوره؟|خوبی؟
Czech = Ahoj|Dobrý den|Čau|Dobré ráno ;; jak se máš?|jak se vede? ## Thai = สวัสดี|สวัสดีครับ|สวัสดีค่ะ ;; สบายดีไหม
Tagalog = Kumusta|Magandang umaga|Magandang hapon ;; kumusta ka?
Finnish = Hei|Moi|Terve|Hyvää huomenta|Moikka ;; mitä kuuluu?
Swahili = Jambo|Habari|Hujambo|Mambo ;; habari yako?|vipi?
"""
"""Greetings per language (`` ## `` between languages): the words, then `` ;; `` and small talk in that language."""

PASTE = r"""
@article: The city council approved a plan on {weekday} to turn {thing} into a public space for the neighborhood.
@article: Local residents have mixed feelings about the project, and several of them spoke at the meeting.
@article: The company announced that it would open a new office in {city} later this year.
@article: According to the report, the number of people cycling to work has grown steadily since 2019.
@article: The museum's new exhibition brings together paintings that have never been shown in public before.
@article: The festival, which started as a small gathering of friends, now attracts visitors from all over {country}.
@article: In an interview, the director said the film took almost a decade to make.
@article: Supporters of the plan say it will make the streets safer for children walking to school.
@article: The study followed a group of volunteers for several years and tracked their daily habits.
@article: Officials have not yet said when the work on {thing} will be finished.
@email: I hope this message finds you well.|I wanted to follow up on our conversation from {weekday}.
@email: Could you send me the latest version of the slides?|Unfortunately I will not be able to join the call.
@email: Please find the updated plan for {project} attached.|Let me know if you have any questions.
@email: I think we should move the deadline for {project} to {weekday}.|Thanks again for your help with this.
@email: {pname} mentioned that the client is not happy with the current design.|Can we schedule a quick call?
@email: I have reviewed the document and left a few comments.|The budget for {project} still needs approval.
@email: We are still waiting for feedback from the legal team.|Sorry for the late reply, it has been a busy week.
@story: The old lighthouse keeper had not spoken to anyone in years.|{pname} found the letter inside a library book.
@story: Nobody in the village knew where the stranger had come from.|The door creaked open, although no one was there.
@story: She packed her bag, left a note on the kitchen table and walked to the station.|The fox watched from the hill.
@story: Every night the boy counted the stars until he fell asleep.|It was the last day of summer in {city}.
@story: {pname} had always wanted to see the sea.|The map was older than anyone could remember.
@story: When the music stopped, everyone turned to look at the piano.|The cat knew something the humans did not.
@story: They walked in silence until they reached the bridge.|"We should not be here," {pname} whispered.
@story: The robot had been built to clean floors, but it dreamed of painting.|The train was almost empty.
@notes: - {pname} will update the roadmap before {weekday}|- Decision: postpone {project} until the design review
@notes: - Action item: {pname} to contact the vendor about the delay|- Budget for {project} is still pending
@notes: - Discussed hiring for the support team|- {pname} raised concerns about the testing schedule
@notes: - Next meeting moved to {weekday}|- Agreed to drop the dark mode feature for now|- Open question: who owns QA?
@notes: - {pname} shared feedback from the customer interviews
@review: I bought this blender last month and I have mixed feelings about it.|The battery life is honestly great.
@review: Customer service was friendly but it took them two weeks to answer.|The instructions were very confusing.
@review: It looks nice on the desk, but it is louder than I expected.|I would probably not buy it again.
@review: The hotel was close to the station and the staff were lovely.|Breakfast was fine, nothing special.
@lead: Here is the text:|Can you read this?|My boss sent me this:|I wrote this:|Found this online:|Check this out:
@lead: Summarize this:|Please fix this: @code_lead: Here's my code:|I keep getting this error:|This doesn't work:
@code_lead: My code:|Help: @follow: What do you think?|summarize|Summarize this please.|Can you make this shorter?
@follow: tl;dr?|fix this|Is this well written?|Fix the grammar please.|What is the main point here?
@follow: Translate this to French.|Write a reply to this. @code_q: why does this not work?|fix this|what does this do?
@code_q: can you explain this code?|is there a bug here?|how can I make this faster?|convert this to TypeScript
@code_q: add type hints|write tests for this|help|review my code please|this throws an error, help
@log_q: what does this error mean?|why is my server crashing?|what's going on here?|how do I fix this?|help!!
@python: def $func($arg):\n    result = []\n    for item in $arg:\n        if item.$attr is not None:\n
+            result.append(item.$attr)\n    return result
@python: import json\n\n\ndef load_$noun(path):\n    with open(path) as f:\n        data = json.load(f)\n
+    return data["$key"]
@python: class $Class:\n    def __init__(self, name, $arg):\n        self.name = name\n        self.$arg = $arg\n\n
+    def __repr__(self):\n        return f"$Class({self.name!r})"
@python: for i in range(len($arg)):\n    print($arg[i].$attr)
@python: try:\n    response = requests.get(url, timeout=10)\n    response.raise_for_status()\nexcept Exception as e:\n
+    print("failed to fetch $noun:", e)
@python: async def fetch_$noun(session, $key):\n    async with session.get(f"/api/$noun/{$key}") as resp:\n
+        return await resp.json()
@javascript: function $func($arg) {\n  return $arg.filter((x) => x.$attr).map((x) => x.name);\n}
@javascript: const $noun = await fetch("/api/$noun").then((res) => res.json());\nconsole.log($noun.length);
@javascript: document.querySelector("#$noun").addEventListener("click", () => {\n  setCount(count + 1);\n});
@sql: SELECT u.id, u.email, o.created_at\nFROM users u\nJOIN orders o ON o.user_id = u.id\nWHERE o.status = '$status'\n
+ORDER BY o.created_at DESC\nLIMIT 50;
@sql: UPDATE $table SET $attr = NULL WHERE $attr = '';
@sql: CREATE TABLE $table (\n  id SERIAL PRIMARY KEY,\n  name TEXT NOT NULL,\n  created_at TIMESTAMP DEFAULT now()\n);
@func: process|get_names|filter_items|clean_data|parse_rows|handle|update_users|main @arg: items|users|records|rows
@arg: data|orders|products @attr: name|email|price|status|owner|title|created_at @noun: users|orders|products|config
@noun: settings|posts|comments @key: user_id|order_id|items|results|data|token|slug|page @Class: User|Order|Product
@Class: Config|Task|Invoice|Customer @status: pending|shipped|cancelled|paid|active @table: users|orders|products
@table: sessions|customers|invoices @proj: myapp|backend|scraper|bot|thesis|website|api @error: KeyError: 'user_id'
@error: TypeError: 'NoneType' object is not subscriptable|IndexError: list index out of range
@error: ValueError: invalid literal for int() with base 10: 'abc'|ModuleNotFoundError: No module named 'requests'
@error: AttributeError: 'list' object has no attribute 'split'
@error: FileNotFoundError: [Errno 2] No such file or directory: 'config.yaml' @log: request completed|cache miss
@log: retrying connection|user logged in|job finished|slow query detected|disk usage high|connection reset by peer
@log: token expired|rate limit exceeded|worker started|worker stopped|health check failed @svc: api|worker|auth|db
@svc: scheduler|gateway|billing @user: sam|alex|maria|dev|ubuntu|jkim|pat
@js_error: TypeError: Cannot read properties of undefined (reading 'map')|ReferenceError: process is not defined
@js_error: TypeError: fetch failed|SyntaxError: Unexpected token '<', "<!DOCTYPE "... is not valid JSON @month2: 01|02
@month2: 03|04|05|06|07|08|09|10|11|12 @day2: 02|05|09|11|14|17|19|22|25|28
@csv: name,city,signup_date => {pname},{city},2024-{month2}-{day2}
@csv: id,product,price,quantity => {id},{product},{price},{qty}
@csv: date,description,category => 2025-{month2}-{day2},{expense},{category}|title,author,year => {book},{pname},{year}
@csv: name,team,role => {pname},{team},{role} @id: 1042|1043|2210|3391|4407|5120|6613|7001|8875|9902 @price: 4.99|12.50
@price: 19.00|7.25|129.99|45.00|3.10|89.90 @qty: 1|2|3|5|10|12 @product: Desk lamp|Notebook|USB cable|Mug|Backpack
@product: Headphones @expense: Coffee beans|Train ticket|Rent|Gym|Concert|Groceries|Dentist @category: food|travel|home
@category: fun|health @team: Design|Backend|Sales|Support|Marketing|Data @role: lead|intern|engineer|manager|designer
@role: analyst @md: Ideas for {idea_topic} => {topic}|Todo => {life_task}|Trip to {city} => {trip_item}
@md: Goals for this year => {life_task}|Movies to watch => {movie}|Recipes to try => {dish}
@trip_item: visit {building}|try {dish}|see {place}|day trip to {city}|book the hotel|buy a travel adapter
@json_q: is this valid JSON?|convert this to YAML|explain this config|what does this mean?|why won't this parse?
@csv_q: clean this up|convert to JSON|what's wrong with this file?|make this a markdown table|sort this by name
@md_q: which one is best?|add more|make this sound better|turn this into an email|what am I missing?
"""
"""Long pasted texts: sentences, code (``string.Template`` names, ``\\n`` for line breaks), traces, data."""
